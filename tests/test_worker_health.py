"""The health check of Celery workers (deploy/healthcheck.sh → wovepaper.worker_health), with real
worker processes: it passes for a solo worker busy with a long task, which answers no ping, and
fails for a worker that started ("ready.") without its database."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys

import pytest
from celery import Celery

from papers.models import HarvestRun
from tests.papers.harvest.faulty_oai import FaultyOAI
from tests.workers import REDIS_BROKER, ROOT, WorkerPool, wait_for

pytestmark = pytest.mark.postgres


@pytest.fixture
def pool(tmp_path, transactional_db):
    pool = WorkerPool(
        broker=REDIS_BROKER,
        tmp_path=tmp_path,
        settings={
            "WORKER_HEALTH_DIR": str(tmp_path / "health"),
            "WORKER_HEALTH_INTERVAL": "1",
            "ARXIV_MIN_INTERVAL": "0",
            "HARVEST_ENQUEUE_MATCHING": "0",
        },
    )
    pool.sender = Celery(broker=REDIS_BROKER, set_as_current=False)
    try:
        yield pool
    finally:
        pool.close()
        pool.delete_queues(pool.sender, ["harvest", "default"])
        pool.sender.close()


def healthcheck(pool: WorkerPool, name: str) -> subprocess.CompletedProcess:
    """What deploy/healthcheck.sh runs for the workers."""
    node = f"{pool.prefix}{name}@{socket.gethostname()}"
    return subprocess.run(
        [sys.executable, "-m", "wovepaper.worker_health", node],
        cwd=ROOT,
        env=pool.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def ping(pool: WorkerPool, name: str) -> subprocess.CompletedProcess:
    node = f"{pool.prefix}{name}@{socket.gethostname()}"
    return subprocess.run(
        [sys.executable, "-m", "celery", "-A", "wovepaper", "inspect", "ping"]
        + ["--timeout", "2", "-d", node],
        cwd=ROOT,
        env=pool.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_healthcheck_passes_for_a_solo_worker_busy_with_a_harvest(pool):
    with FaultyOAI(pages=8, per_page=5) as server:
        server.delay = 1.5
        worker = pool.start("harvest", ["harvest"], ARXIV_OAI_URL=server.url)
        pool.sender.send_task(
            "papers.harvest_window",
            # A set of its own: the harvest lock lives in a Redis other tests share.
            kwargs={"metadata_prefix": "arXiv", "set_spec": f"ops-{pool.prefix}"},
            queue=pool.queue("harvest"),
        )
        wait_for(
            lambda: HarvestRun.objects.filter(pages__gte=1).exists(),
            timeout=60,
            what="the harvest to be under way",
            on_timeout=worker.output,
        )
        assert ping(pool, "harvest").returncode != 0  # busy: the old check's false alarm
        checked = healthcheck(pool, "harvest")
        assert checked.returncode == 0, checked.stderr
        assert HarvestRun.objects.get().status == HarvestRun.Status.RUNNING  # still busy


def test_the_healthcheck_fails_for_a_worker_without_its_database(pool, tmp_path):
    worker = pool.start(
        "default", ["default"], DATABASE_URL="postgres://postgres@127.0.0.1:9/nowhere"
    )
    path = tmp_path / "health" / f"{worker.name}@{socket.gethostname()}.json"
    wait_for(path.exists, timeout=30, what="the worker's health file", on_timeout=worker.output)
    checked = healthcheck(pool, "default")
    assert checked.returncode == 1
    assert "database unreachable" in checked.stderr
    assert json.loads(path.read_text())["problems"][0].startswith("database unreachable")


def test_the_healthcheck_fails_for_a_worker_that_is_gone(pool):
    worker = pool.start("default", ["default"], WORKER_HEALTH_INTERVAL="1")
    wait_for(
        lambda: healthcheck(pool, "default").returncode == 0,
        timeout=30,
        what="the worker's first health report",
        on_timeout=worker.output,
    )
    worker.kill()
    wait_for(
        lambda: healthcheck(pool, "default").returncode == 1,
        timeout=30,
        what="the health check to notice the dead worker",
    )
    assert "no sign of life" in healthcheck(pool, "default").stderr


def test_the_healthcheck_fails_while_a_task_waits_longer_than_its_queue_allows(pool, tmp_path):
    """The solo harvest worker busy with a long harvest, a second task waiting in its queue:
    once that task has waited WORKER_QUEUE_MAX_AGE the check fails, saying so; once the
    worker takes it, the check passes again."""
    with FaultyOAI(pages=6, per_page=5) as server:
        server.delay = 2.0
        worker = pool.start(
            "harvest", ["harvest"], ARXIV_OAI_URL=server.url, WORKER_QUEUE_MAX_AGE="3"
        )
        pool.sender.send_task(
            "papers.harvest_window",
            kwargs={"metadata_prefix": "arXiv", "set_spec": f"ops-{pool.prefix}"},
            queue=pool.queue("harvest"),
        )
        wait_for(
            lambda: HarvestRun.objects.filter(pages__gte=1).exists(),
            timeout=60,
            what="the harvest to be under way",
            on_timeout=worker.output,
        )
        # Stamped with the time it was sent, as every message published in a process that
        # loaded the project's Celery app (wovepaper.worker_health).
        pool.sender.send_task("papers.harvest_resume_stale", queue=pool.queue("harvest"))
        failing = wait_for(
            lambda: (checked := healthcheck(pool, "harvest")).returncode == 1 and checked,
            timeout=30,
            what="the check to see the waiting task",
            on_timeout=worker.output,
        )
        queue = pool.queue("harvest")
        assert re.search(
            rf"queue {queue}: the oldest of \d+ waiting tasks has waited", failing.stderr
        )
        assert "(WORKER_QUEUE_MAX_AGE 3)" in failing.stderr
        wait_for(
            lambda: healthcheck(pool, "harvest").returncode == 0,
            timeout=60,
            what="the check to pass once the worker took the task",
            on_timeout=worker.output,
        )
        path = tmp_path / "health" / f"{worker.name}@{socket.gethostname()}.json"
        assert json.loads(path.read_text())["queues"][queue]["waiting"] == 0
