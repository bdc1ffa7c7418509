"""What each Celery worker can do, written down by the worker itself and read by the health check.

A ping over the broker says too little and too much: a solo-pool worker (harvest) answers no
ping while a task runs, and a worker that cannot reach its database still answers one. So each
worker runs a thread that, every WORKER_HEALTH_INTERVAL seconds, tries its database and its
broker, looks at its queues, and writes the outcome to WORKER_HEALTH_DIR/<worker name>.json;
the thread goes on while a task holds the worker. `python -m wovepaper.worker_health NAME...`
(deploy/healthcheck.sh) fails for a worker whose file says something is down, or is older than
three intervals (the worker is dead or hung).

Its queues: how many tasks wait in each, and, on Redis, how long the oldest has waited. Every
message published by a process of this app carries the time it was sent (a header stamped in
`before_task_publish`: pages, workers and beat alike), and Redis keeps a queue as a list whose
oldest message is read without taking it. A queue whose oldest task has waited more than
WORKER_QUEUE_MAX_AGE seconds is a problem: its workers are too few, or stuck. RabbitMQ lets no
message be read without taking it: there the count alone is written and the age is unknown.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from celery.signals import before_task_publish, worker_ready
from django.conf import settings
from django.db import connection

# The header every published message carries: when it was sent (seconds since the epoch).
SENT_AT = "wovepaper_sent_at"


@before_task_publish.connect
def _stamp_sent_at(headers: dict | None = None, **kwargs) -> None:
    if headers is not None:
        headers.setdefault(SENT_AT, time.time())


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


def _broker_and_queues(app, queues: list[str]) -> tuple[str, dict[str, dict]]:
    """Whether the broker answers ("" or the problem), and each queue's waiting tasks:
    {"waiting": n, "oldest_seconds": age, or None where it is unknown}."""
    seen: dict[str, dict] = {}
    try:
        with app.connection_for_read() as conn:
            conn.ensure_connection(max_retries=1, timeout=5)
            channel = conn.default_channel
            redis = conn.transport.driver_type == "redis"
            for queue in queues:
                seen[queue] = (
                    _redis_queue(channel.client, queue)
                    if redis
                    else {
                        "waiting": channel.queue_declare(queue=queue, passive=True).message_count,
                        "oldest_seconds": None,
                    }
                )
    except Exception as exc:
        return f"broker unreachable: {exc}".strip(), seen
    return "", seen


def _redis_queue(client, queue: str) -> dict:
    # kombu pushes on the left and workers pop on the right: the oldest is the last element.
    # (Tasks here carry no priority, so no other list of kombu's holds this queue's tasks.)
    oldest = client.lindex(queue, -1)
    sent_at = None
    if oldest is not None:
        try:
            sent_at = json.loads(oldest)["headers"].get(SENT_AT)
        except (ValueError, KeyError, TypeError, AttributeError):
            sent_at = None
    return {
        "waiting": client.llen(queue),
        "oldest_seconds": None if sent_at is None else max(time.time() - float(sent_at), 0.0),
    }


def _queue_problems(queues: dict[str, dict]) -> list[str]:
    limit = settings.WORKER_QUEUE_MAX_AGE
    return [
        f"queue {queue}: the oldest of {seen['waiting']} waiting tasks has waited "
        f"{seen['oldest_seconds']:.0f} s (WORKER_QUEUE_MAX_AGE {limit})"
        for queue, seen in queues.items()
        if limit and seen["oldest_seconds"] is not None and seen["oldest_seconds"] > limit
    ]


def worker_health_write(name: str, app, queues: Sequence[str] = ()) -> dict:
    """Check the database, the broker and `queues` from this process; write and return the
    outcome."""
    broker, seen = _broker_and_queues(app, list(queues))
    problems = [p for p in (_database_problem(), broker, *_queue_problems(seen)) if p]
    status = {
        "worker": name,
        "at": time.time(),
        "pid": os.getpid(),
        "problems": problems,
        "queues": seen,
    }
    path = worker_health_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps(status))
    partial.replace(path)  # the health check never reads half a file
    return status


@worker_ready.connect
def _start_reporting(sender, **kwargs) -> None:
    name, app = sender.hostname, sender.app
    queues = sorted(app.amqp.queues.consume_from)  # what this worker was started with (-Q)

    def report() -> None:
        while True:
            try:
                worker_health_write(name, app, queues)
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
