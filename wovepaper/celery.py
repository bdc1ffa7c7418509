from __future__ import annotations

import logging
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

app = Celery("wovepaper")
app.config_from_object("django.conf:settings", namespace="CELERY")
if app.conf.task_always_eager and not app.conf.broker_url:
    # Inline tasks never reach a broker, but each still takes a producer from the broker's
    # pool: without a URL kombu assumes amqp://localhost and warns about it on every run.
    app.conf.broker_url = "memory://localhost/"
app.autodiscover_tasks()
# The search indexer's task lives in the shared library, which is no app.
app.autodiscover_tasks(["wovepaper.lib.search"], related_name="engine_feed")
# Each worker writes what it can do (its database, its broker) for deploy/healthcheck.sh.
import wovepaper.worker_health  # noqa: E402, F401


class _BrokerLostWithoutTraceback(logging.Filter):
    """A task that ends while the broker is away cannot be acknowledged: Celery logs that with
    the connection's whole chained traceback (some 50 lines of redis-py's retries), which says
    no more than the reason on the line itself. The line stays; the task is delivered again
    once the broker is back, which every task here survives (they are idempotent)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith(("Couldn't ack", "Couldn't reject")):
            record.exc_info = None
            record.exc_text = None
        return True


logging.getLogger("celery.worker.request").addFilter(_BrokerLostWithoutTraceback())
