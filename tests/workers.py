"""Real Celery worker processes for the operations tests: started as an operator would start them
(`celery -A wovepaper worker -Q … -n …`), on the real brokers, against the test database.

Everything a worker needs comes through its environment, as in production; the queues carry a
prefix of their own (CELERY_QUEUE_PREFIX) so that nobody else's worker takes our messages and
ours take nobody else's.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent
REDIS_BROKER = "redis://127.0.0.1:6379/4"
RABBITMQ_BROKER = "amqp://guest:guest@127.0.0.1:5672//"
REDIS_CACHE = "redis://127.0.0.1:6379/4"
BROKERS = {"redis": REDIS_BROKER, "rabbitmq": RABBITMQ_BROKER}


def database_url() -> str:
    """The test database, as a URL a worker process can use."""
    s = connection.settings_dict
    return f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


class Worker:
    def __init__(self, *, name: str, queues: list[str], env: dict[str, str], log_dir: Path):
        self.name = name
        self.queues = queues
        self.env = env
        self.log_path = log_dir / f"{name}.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> Worker:
        self.log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "wovepaper",
                "worker",
                "-P",
                "solo",
                "-Q",
                ",".join(self.queues),
                "-n",
                f"{self.name}@%h",
                "-l",
                "INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_for(
            lambda: b"ready." in self.log_path.read_bytes(),
            timeout=60,
            what=f"worker {self.name} to start",
            on_timeout=self.output,
        )
        return self

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no acknowledgement, as when a machine dies."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        if getattr(self, "log", None):
            self.log.close()


def wait_for(
    condition: Callable[[], object],
    *,
    timeout: float,
    what: str,
    on_timeout: Callable[[], str] | None = None,
    interval: float = 0.2,
):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    detail = on_timeout() if on_timeout else ""
    pytest.fail(f"timed out after {timeout:g} s waiting for {what}\n{detail[-4000:]}")


class WorkerPool:
    """Starts workers for one test and stops (or has killed) every one of them at the end."""

    def __init__(self, *, broker: str, tmp_path: Path, settings: dict[str, str]):
        self.broker = broker
        self.prefix = f"ops-{uuid.uuid4().hex[:8]}-"
        self.tmp_path = tmp_path
        self.settings = settings
        self.workers: list[Worker] = []

    def queue(self, name: str) -> str:
        return self.prefix + name

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "DJANGO_"))}
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "wovepaper.settings",
                "DATABASE_URL": database_url(),
                "REDIS_URL": REDIS_CACHE,
                "CELERY_BROKER_URL": self.broker,
                "CELERY_QUEUE_PREFIX": self.prefix,
                "PYTHONUNBUFFERED": "1",
                **self.settings,
                **extra,
            }
        )
        return env

    def start(self, name: str, queues: list[str], **extra: str) -> Worker:
        worker = Worker(
            name=f"{self.prefix}{name}",
            queues=[self.queue(q) for q in queues],
            env=self.env(**extra),
            log_dir=self.tmp_path,
        )
        self.workers.append(worker)
        return worker.start()

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()

    def delete_queues(self, sender, names: list[str]) -> None:
        """Remove this pool's queues from the broker (`sender`: a Celery app on it), with
        whatever messages are left in them."""
        with sender.connection_for_write() as conn:
            channel = conn.default_channel
            for name in names:
                if self.broker.startswith("redis"):
                    client = channel.client
                    for key in client.keys(f"{self.queue(name)}*"):
                        client.delete(key)
                else:
                    channel.queue_delete(self.queue(name))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class OwnRedis:
    """A Redis server of a test's own on a free port, to stop, freeze and start again."""

    def __init__(self, directory: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (the suite needs a real Redis)")
        self.binary = binary
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.processes: list[subprocess.Popen] = []

    def start(self) -> subprocess.Popen:
        process = subprocess.Popen(
            [
                self.binary,
                *("--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(self.directory)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.processes.append(process)
        client = redis.Redis(port=self.port)
        wait_for(lambda: _pings(client), timeout=10, what="our Redis to start")
        return process

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGCONT)  # a frozen one cannot take SIGKILL's exit
                process.kill()
                process.wait(timeout=10)


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
