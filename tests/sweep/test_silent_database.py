"""A database that accepts connections and never answers (a frozen host, a partition) makes the
site fail fast: gunicorn started as production starts it, its DATABASE_URL pointing at a
listener that accepts and stays silent. A worker warms up and accepts within seconds, every
route that needs the database answers 503 with Retry-After (JSON under /api/) well before the
worker timeout, and /health says which dependency is down within its own budget (the health
check's curl gives it 10 s). Before the connect timeout, psycopg waited 130 s: gunicorn's bare
500 after 60 s, and new workers stuck in warm-up."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.workers import ROOT, database_url, free_port, wait_for

# Far below the 60 s worker timeout and the health check's 10 s; the connect timeout is 5 s.
BUDGET_SECONDS = 8.0


class SilentListener:
    """Accepts every connection on 127.0.0.1 and never sends a byte; closes them at the end."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(64)
        self.port = self.server.getsockname()[1]
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.held.append(connection)

    def close(self) -> None:
        self.server.close()
        for connection in self.held:
            connection.close()


@pytest.fixture
def silent_database() -> Iterator[SilentListener]:
    listener = SilentListener()
    listener.thread.start()
    yield listener
    listener.close()


@contextmanager
def gunicorn(tmp_path: Path, name: str, **environment: str) -> Iterator[tuple[str, Path]]:
    """gunicorn as the Procfile starts it (one worker, the 60 s timeout) on `environment`; its
    address and its log."""
    port = free_port()
    log_path = tmp_path / f"{name}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "REDIS_"))}
    env.update(WOVEPAPER_DATA_DIR=str(tmp_path), CELERY_BROKER_URL="", **environment)
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "wovepaper.wsgi"]
            + ["-b", f"127.0.0.1:{port}", "-w", "1", "--timeout", "60", "--log-level", "info"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            yield f"http://127.0.0.1:{port}", log_path
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=30)


def _warmed_up(log_path: Path, timeout: float) -> None:
    wait_for(
        lambda: b"ready (warm-up" in log_path.read_bytes(),
        timeout=timeout,
        what="the gunicorn worker to finish its warm-up",
        on_timeout=log_path.read_text,
    )


@pytest.fixture
def site_on_a_silent_database(silent_database, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    url = f"postgres://postgres@127.0.0.1:{silent_database.port}/wovepaper"
    with gunicorn(tmp_path, "silent", DATABASE_URL=url) as site:
        yield site


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes, float]:
    request = urllib.request.Request(url, headers=headers or {})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=75) as response:
            status, headers, body = response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        status, headers, body = error.code, dict(error.headers), error.read()
    return status, headers, body, time.monotonic() - started


def test_a_silent_database_fails_every_request_fast_with_503(site_on_a_silent_database):
    base, log_path = site_on_a_silent_database
    started = time.monotonic()
    # The worker accepts once its warm-up is over: it gives up at the first step that needs
    # the database (137 s before the connect timeout).
    _warmed_up(log_path, timeout=45)
    assert time.monotonic() - started < 40, log_path.read_text()
    assert b"the database does not answer" in log_path.read_bytes()

    routes = {
        "/api/v1/me/lists/": {"Authorization": "Token " + "a" * 40},
        "/lists/shared/" + "x" * 22: {},
        "/health": {},
    }
    for path, headers in routes.items():
        status, response_headers, body, seconds = _get(base + path, headers)
        assert status == 503, (path, status, body[:300])
        assert response_headers.get("Retry-After"), path
        assert seconds < BUDGET_SECONDS, (path, seconds)
        if path.startswith(("/api/", "/health")):
            assert response_headers["Content-Type"].startswith("application/json"), path
    status, _, body, _ = _get(base + "/api/v1/me/lists/", routes["/api/v1/me/lists/"])
    assert b'"code": "unavailable"' in body or b'"code":"unavailable"' in body


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_cached_anonymous_page_is_served_while_the_database_is_silent(
    silent_database, own_redis, tmp_path, paper_factory
):
    paper_factory(title="Served from the page cache")
    own_redis.start()
    with gunicorn(tmp_path, "healthy", DATABASE_URL=database_url(), REDIS_URL=own_redis.url) as (
        base,
        log_path,
    ):
        _warmed_up(log_path, timeout=90)
        # The page cache's key holds the host: the same one for both servers.
        status, _, body, _ = _get(base + "/", {"Host": "localhost"})
        assert status == 200 and b"Served from the page cache" in body
    silent = f"postgres://postgres@127.0.0.1:{silent_database.port}/wovepaper"
    with gunicorn(tmp_path, "silent", DATABASE_URL=silent, REDIS_URL=own_redis.url) as (
        base,
        log_path,
    ):
        _warmed_up(log_path, timeout=45)
        status, _, body, seconds = _get(base + "/", {"Host": "localhost"})
    assert status == 200 and b"Served from the page cache" in body, (status, body[:300])
    assert seconds < 1.0, seconds


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_statement_past_the_statement_timeout_is_cancelled_by_the_server(tmp_path):
    # What deploy/gunicorn.conf.py sets for the web, here at 1 s: a query the database takes
    # longer over ends in an error the site answers 503 for, never in the worker timeout.
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(
        DATABASE_URL=database_url(), WOVEPAPER_DATA_DIR=str(tmp_path), DB_STATEMENT_TIMEOUT="1"
    )
    script = (
        "from django.db import connection\n"
        "try:\n"
        "    connection.cursor().execute('SELECT pg_sleep(5)')\n"
        "except Exception as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "OperationalError" in done.stdout and "statement timeout" in done.stdout, done
    assert time.monotonic() - started < 30
