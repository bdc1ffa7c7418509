"""What each Celery worker can do, written down by the worker itself and read by the health check.

A ping over the broker says too little and too much: a solo-pool worker (harvest) answers no
ping while a task runs, and a worker that cannot reach its database still answers one. So each
worker runs a thread that, every WORKER_HEALTH_INTERVAL seconds, tries its database and its
broker and writes the outcome to WORKER_HEALTH_DIR/<worker name>.json; the thread goes on while
a task holds the worker. `python -m wovepaper.worker_health NAME...` (deploy/healthcheck.sh)
fails for a worker whose file says something is down, or is older than three intervals (the
worker is dead or hung).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

from celery.signals import worker_ready
from django.conf import settings
from django.db import connection


def worker_health_path(name: str) -> Path:
    return Path(settings.WORKER_HEALTH_DIR) / f"{name}.json"


def _database_problem() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:
        return f"database unreachable: {exc}".strip()
    finally:
        connection.close()  # this thread keeps no connection between checks
    return ""


def _broker_problem(app) -> str:
    try:
        with app.connection_for_read() as conn:
            conn.ensure_connection(max_retries=1, timeout=5)
    except Exception as exc:
        return f"broker unreachable: {exc}".strip()
    return ""


def worker_health_write(name: str, app) -> dict:
    """Check the database and the broker from this process; write and return the outcome."""
    problems = [p for p in (_database_problem(), _broker_problem(app)) if p]
    status = {"worker": name, "at": time.time(), "pid": os.getpid(), "problems": problems}
    path = worker_health_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps(status))
    partial.replace(path)  # the health check never reads half a file
    return status


@worker_ready.connect
def _start_reporting(sender, **kwargs) -> None:
    name, app = sender.hostname, sender.app

    def report() -> None:
        while True:
            try:
                worker_health_write(name, app)
            except Exception as exc:  # the file then ages, and the health check says so
                print(f"worker health: cannot write its file: {exc}", file=sys.stderr)
            time.sleep(settings.WORKER_HEALTH_INTERVAL)

    threading.Thread(target=report, name="worker-health", daemon=True).start()


def worker_health_problems(name: str, *, now: float | None = None) -> list[str]:
    """What is wrong with the worker `name` (e.g. harvest@host), as its own file says."""
    path = worker_health_path(name)
    try:
        status = json.loads(path.read_text())
    except FileNotFoundError:
        return [f"{name}: no health file {path} (never started, or another WORKER_HEALTH_DIR)"]
    except ValueError:
        return [f"{name}: unreadable health file {path}"]
    age = (now or time.time()) - status["at"]
    problems = [f"{name}: {problem}" for problem in status["problems"]]
    if age > 3 * settings.WORKER_HEALTH_INTERVAL:
        problems.append(f"{name}: no sign of life for {age:.0f} s (dead or hung)")
    return problems


def main(names: list[str]) -> int:
    problems = [problem for name in names for problem in worker_health_problems(name)]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")
    django.setup()
    sys.exit(main(sys.argv[1:]))
