"""deploy/healthcheck.sh as the systemd timer runs it, against gunicorn started with
deploy/gunicorn.conf.py under the production settings (SSL redirect on, ALLOWED_HOSTS naming the
public host only) and a real worker: it passes on a healthy host and fails with the database
away."""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.workers import REDIS_BROKER, REDIS_CACHE, ROOT, WorkerPool, free_port, wait_for

pytestmark = pytest.mark.postgres

PRODUCTION = {
    "WOVEPAPER_PRODUCTION": "1",
    "SECRET_KEY": "a-test-secret-key-long-enough-for-check-deploy-0123456789-abcdefghijk",
    "ALLOWED_HOSTS": "wovepaper.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://wovepaper.example.org",
    "SITE_URL": "https://wovepaper.example.org",
    "WEB_WARM_UP": "0",  # nothing to do with health; spares the loaded machine the encoder
}


class Web:
    def __init__(self, tmp_path: Path, env: dict[str, str], name: str) -> None:
        self.port = free_port()
        self.log_path = tmp_path / f"{name}.log"
        self.env = env
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Web:
        self.log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "wovepaper.wsgi"]
            + ["-b", f"127.0.0.1:{self.port}", "-w", "1", "--timeout", "60"],
            cwd=ROOT,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_for(self.answers, timeout=60, what="gunicorn", on_timeout=self.log_path.read_text)
        return self

    def answers(self) -> bool:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{self.port}/robots.txt", timeout=5)
        except urllib.error.HTTPError:
            return True  # any HTTP answer: the server is up
        except OSError:
            return False
        return True

    def __exit__(self, *exc) -> None:
        assert self.process is not None
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


@pytest.fixture
def pool(tmp_path, transactional_db):
    pool = WorkerPool(
        broker=REDIS_BROKER,
        tmp_path=tmp_path,
        settings={**PRODUCTION, "WORKER_HEALTH_DIR": str(tmp_path / "health")},
    )
    try:
        yield pool
    finally:
        pool.close()


def healthcheck(env: dict[str, str], port: int, worker: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "deploy/healthcheck.sh", worker],
        cwd=ROOT,
        env={**env, "PORT": str(port)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_healthcheck_passes_on_a_healthy_production_host_and_fails_without_its_database(
    pool, tmp_path
):
    worker = pool.start("default", ["default"], WORKER_HEALTH_INTERVAL="1")
    name = f"{worker.name}@{socket.gethostname()}"
    wait_for(
        (tmp_path / "health" / f"{name}.json").exists,
        timeout=30,
        what="the worker's health file",
        on_timeout=worker.output,
    )
    env = pool.env()
    assert env["CELERY_BROKER_URL"] == REDIS_BROKER and env["REDIS_URL"] == REDIS_CACHE
    with Web(tmp_path, env, "web") as web:
        # What the issue saw: over plain http, without the proxy's headers, a redirect.
        with pytest.raises(urllib.error.HTTPError) as plain:
            opener = urllib.request.build_opener(NoRedirect)
            opener.open(f"http://127.0.0.1:{web.port}/health", timeout=10)
        assert plain.value.code in (301, 400)
        checked = healthcheck(env, web.port, name)
        assert (checked.returncode, checked.stderr) == (0, "")

    away = {**env, "DATABASE_URL": "postgres://postgres@127.0.0.1:9/nowhere"}
    with Web(tmp_path, away, "web-without-database") as web:
        checked = healthcheck(away, web.port, name)
    assert checked.returncode == 1
    assert "web: unhealthy (HTTP 503)" in checked.stderr
    assert '"database": "down: OperationalError"' in checked.stderr
    assert name not in checked.stderr  # the worker, on the database that is there, is fine


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None
