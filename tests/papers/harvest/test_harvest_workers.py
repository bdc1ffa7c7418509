"""Harvests through real Celery worker processes on the real brokers, Redis and RabbitMQ, as an
operator runs them: a worker killed with SIGKILL mid-run, and a harvest longer than the
broker's own timeout. The workers are other processes, so they need a database server."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from celery import Celery
from django.utils import timezone

from papers.models import HarvestRun, Paper
from tests.papers.harvest.faulty_oai import FaultyOAI
from tests.workers import BROKERS, WorkerPool, wait_for

pytestmark = pytest.mark.postgres

# Redis redelivers what is not acknowledged within visibility_timeout: shortened to seconds,
# and checked for every second, so that the tests see it happen.
REDIS_OPTIONS = {
    "visibility_timeout": 4,
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
}


@pytest.fixture
def server():
    with FaultyOAI(pages=6, per_page=25) as faulty:
        yield faulty


@pytest.fixture(params=sorted(BROKERS))
def workers(request, server, tmp_path, transactional_db):
    broker = request.param
    options = REDIS_OPTIONS if broker == "redis" else {}
    pool = WorkerPool(
        broker=BROKERS[broker],
        tmp_path=tmp_path,
        settings={
            "ARXIV_OAI_URL": server.url,
            "ARXIV_MIN_INTERVAL": "0",
            "ARXIV_OAI_TIMEOUT": "20",
            "HARVEST_LOCK_TTL": "3",
            "HARVEST_ENQUEUE_MATCHING": "0",
            "CELERY_BROKER_TRANSPORT_OPTIONS": json.dumps(options),
        },
    )
    pool.sender = Celery(broker=BROKERS[broker], set_as_current=False)
    pool.sender.conf.broker_transport_options = options
    try:
        yield pool
    finally:
        pool.close()
        pool.delete_queues(pool.sender, ["harvest", "default", "match"])
        pool.sender.close()


def send_harvest(pool: WorkerPool, **kwargs) -> None:
    pool.sender.send_task("papers.harvest_window", kwargs=kwargs, queue=pool.queue("harvest"))


def the_run() -> HarvestRun | None:
    return HarvestRun.objects.order_by("pk").first()


def test_a_worker_killed_mid_harvest_leaves_a_run_that_completes_by_itself(workers, server):
    """kill -9 mid-run: the broker delivers the task again (RabbitMQ when the connection
    drops, Redis after its visibility timeout), the next worker finds the run that task had
    started, waits for the dead worker's lock to lapse, and resumes it from its checkpoint."""
    server.delay = 0.5
    first = workers.start("harvest-1", ["harvest"])
    send_harvest(workers, metadata_prefix="arXiv")
    wait_for(
        lambda: (the_run() or HarvestRun(pages=0)).pages >= 2,
        timeout=60,
        what="two pages harvested",
        on_timeout=first.output,
    )
    first.kill()
    run = the_run()
    assert run.status == HarvestRun.Status.RUNNING and run.pages < 6
    second = workers.start("harvest-2", ["harvest"])
    wait_for(
        lambda: the_run().status == HarvestRun.Status.SUCCEEDED,
        timeout=120,
        what="the run to complete",
        on_timeout=second.output,
    )
    run = the_run()
    assert HarvestRun.objects.count() == 1
    assert (run.pages, run.created) == (6, 150)
    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == sorted(server.arxiv_ids())
    # Resumed from the checkpoint: no page before it was asked for again.
    assert sorted(set(server.served_pages())) == [1, 2, 3, 4, 5, 6]
    assert len(server.served_pages()) <= 6 + 1  # at most the page in flight at the kill


def test_a_harvest_longer_than_the_broker_timeout_completes_once(workers, server):
    """Six pages at 0.8 s each outlast Redis' shortened 4 s visibility timeout: as one task it
    would be delivered again and harvested twice. As a chain of tasks of at most a second
    each, every page is asked for once and the run completes once."""
    server.delay = 0.8
    worker = workers.start("harvest", ["harvest"], HARVEST_TASK_SECONDS="1")
    send_harvest(workers, metadata_prefix="arXiv")
    wait_for(
        lambda: getattr(the_run(), "status", "") == HarvestRun.Status.SUCCEEDED,
        timeout=120,
        what="the run to complete",
        on_timeout=worker.output,
    )
    # Give a redelivery (visibility timeout + restore interval) the time to show up.
    time.sleep(REDIS_OPTIONS["visibility_timeout"] + 2)
    run = the_run()
    assert HarvestRun.objects.count() == 1 and (run.pages, run.created) == (6, 150)
    assert server.served_pages() == [1, 2, 3, 4, 5, 6]
    assert worker.output().count("continuing in a new task") >= 2


def test_a_killed_harvest_delivered_again_after_beat_resumed_it_harvests_nothing_twice(
    workers, server
):
    """Redis: kill -9 mid-run; beat's harvest_resume_stale resumes the run in a task of its own
    (another id) before Redis hands the killed task out again. That redelivery must find the run
    it started, now finished by the resume, and not start the whole set over."""
    if not workers.broker.startswith("redis"):
        pytest.skip("RabbitMQ redelivers at once, before beat can resume the run")
    server.delay = 0.5
    first = workers.start("harvest-1", ["harvest"])
    original = workers.sender.send_task(
        "papers.harvest_window", kwargs={"metadata_prefix": "arXiv"}, queue=workers.queue("harvest")
    )
    wait_for(
        lambda: (the_run() or HarvestRun(pages=0)).pages >= 2,
        timeout=60,
        what="two pages harvested",
        on_timeout=first.output,
    )
    first.kill()
    wait_for(
        lambda: HarvestRun.objects.filter(
            pk=the_run().pk, heartbeat_at__lt=timezone.now() - timedelta(seconds=3)
        ).exists(),  # the workers' HARVEST_LOCK_TTL
        timeout=30,
        what="the dead run's heartbeat to go stale",
    )
    # The resuming worker's visibility timeout is long: it resumes, it does not redeliver.
    patient = json.dumps({**REDIS_OPTIONS, "visibility_timeout": 3600})
    resumer = workers.start("harvest-2", ["harvest"], CELERY_BROKER_TRANSPORT_OPTIONS=patient)
    workers.sender.send_task("papers.harvest_resume_stale", queue=workers.queue("harvest"))
    wait_for(
        lambda: the_run().status == HarvestRun.Status.SUCCEEDED,
        timeout=120,
        what="the resumed run to complete",
        on_timeout=resumer.output,
    )
    resumer.stop()
    third = workers.start("harvest-3", ["harvest"])
    wait_for(
        lambda: f"{original.id}] succeeded" in third.output(),
        timeout=60,
        what="the killed task to be delivered again",
        on_timeout=third.output,
    )
    assert HarvestRun.objects.count() == 1
    assert sorted(set(server.served_pages())) == [1, 2, 3, 4, 5, 6]
    assert len(server.served_pages()) <= 6 + 1  # at most the page in flight at the kill
