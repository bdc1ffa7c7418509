"""Queueing work: the one way code hands a Celery task its ids, with one failure rule.

- `send_after_commit(task, ids)` sends once the current transaction commits (at once outside
  one); `send_now` sends at once and says whether the broker took it.
- Tasks are named, not imported ("papers.embed_papers"): a domain module never imports a
  `tasks` module, so no module that a task calls imports it back.
- The publish is bounded: a connection of its own with QUEUE_PUBLISH_TIMEOUT on connecting,
  reading and writing, and no publish retries. A failure is one warning line (no traceback),
  never an exception for the caller, and the broker is not asked again in this process for
  QUEUE_RETRY_AFTER seconds: a page never waits on a broker that is down or frozen, and what
  was not queued is left to the periodic sweeps (embedding, search documents, analysis and
  matching backlogs), or `manage.py catch_up`.
- Without a broker (CELERY_TASK_ALWAYS_EAGER) the task runs here, as before; its own failure
  is logged with its traceback and not raised either.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from functools import partial
from typing import Any

from celery import current_app
from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings
from django.db import transaction

from .batches import chunked

logger = logging.getLogger(__name__)

CHUNK = 1000


class _Broker:
    """This process's view of the broker: which one last failed, when, and why."""

    url = ""
    down_until = 0.0
    failure = ""


def send_after_commit(
    task: str,
    ids: int | Iterable[int] | None = None,
    *,
    args: tuple = (),
    kwargs: dict[str, Any] | None = None,
    chunk: int = CHUNK,
    using: str | None = None,
) -> None:
    """Send `task` once the transaction on `using` commits: `task(*args, ids_chunk, **kwargs)`
    per `chunk` ids (duplicates dropped, none sent for no ids), `task(*args, id, **kwargs)`
    for one int id, `task(*args, **kwargs)` for None. Never raises (see the module)."""
    messages = _messages(ids, chunk)
    if messages:
        transaction.on_commit(
            partial(_send, task, messages, args, kwargs or {}), using=using, robust=True
        )


def send_now(
    task: str,
    ids: int | Iterable[int] | None = None,
    *,
    args: tuple = (),
    kwargs: dict[str, Any] | None = None,
    chunk: int = CHUNK,
    quiet: bool = False,
) -> str:
    """Send `task` now, as `send_after_commit` does; returns "" when the broker took every
    message (or, without a broker, the task ran here), else why it did not. `quiet`: a
    failure is not logged here, for a caller that says it itself in its own words (a
    harvest run, once)."""
    messages = _messages(ids, chunk)
    return _send(task, messages, args, kwargs or {}, quiet=quiet) if messages else ""


def broker_failure() -> str:
    """Why the broker is being left alone in this process ("" when it is not)."""
    if _Broker.url != current_app.conf.broker_url or time.monotonic() >= _Broker.down_until:
        return ""
    return _Broker.failure


def _messages(ids: int | Iterable[int] | None, chunk: int) -> list[tuple]:
    if ids is None:
        return [()]
    if isinstance(ids, int):
        return [(ids,)]
    return [(part,) for part in chunked(dict.fromkeys(ids), chunk)]


def _send(
    task: str, messages: list[tuple], args: tuple, kwargs: dict[str, Any], *, quiet: bool = False
) -> str:
    app = current_app
    signatures = [app.signature(task, args=(*args, *m), kwargs=kwargs) for m in messages]
    if app.conf.task_always_eager:
        if task not in app.tasks:
            # Only a worker's start imports every app's tasks module (Celery's import_modules
            # signal): in a management command or runserver an app nobody imported yet would
            # have its task handed to the in-memory broker, never run, with Celery's
            # AlwaysEagerIgnored warning printed instead.
            app.loader.import_default_modules()
        if task not in app.tasks:
            logger.error("%s is no registered task; nothing ran", task)
            return f"{task} is no registered task"
        for signature in signatures:
            try:
                signature.apply_async()
            except Exception:  # the task ran here and failed: its sweep takes it up
                logger.exception("%s failed inline; the periodic sweep will take it up", task)
        return ""
    if failure := broker_failure():
        return failure
    timeout = settings.QUEUE_PUBLISH_TIMEOUT
    bounded = {
        # Redis (kombu.transport.redis) and AMQP (py-amqp) each read their own names.
        "socket_connect_timeout": timeout,
        "socket_timeout": timeout,
        "retry_on_timeout": False,
        "read_timeout": timeout,
        "write_timeout": timeout,
    }
    sent = 0
    try:
        with app.connection_for_write(
            connect_timeout=timeout, transport_options=bounded
        ) as connection:
            for signature in signatures:
                signature.apply_async(connection=connection, retry=False)
                sent += 1
    except Exception as exc:  # noqa: BLE001 (whatever the broker or kombu raise, the rule holds)
        _Broker.url = app.conf.broker_url
        _Broker.failure = f"{type(exc).__name__}: {exc}"
        _Broker.down_until = time.monotonic() + settings.QUEUE_RETRY_AFTER
        if quiet:
            return _Broker.failure
        logger.warning(
            "could not queue %s (%d of %d messages sent): %s; not asking the broker again for "
            "%s s, the periodic sweep takes up what was not queued",
            task,
            sent,
            len(signatures),
            _Broker.failure,
            settings.QUEUE_RETRY_AFTER,
        )
        return _Broker.failure
    return ""


def broker_forget_failure() -> None:
    """Ask the broker again at the next send (tests; a command that knows it is back)."""
    _Broker.url = ""
    _Broker.down_until = 0.0
    _Broker.failure = ""


class SourcesUnreachable(Exception):
    """A task could not reach Semantic Scholar or OpenAlex. Raised under a worker so that
    Celery, and Flower or any monitor, sees the task retried and then failed."""


def sources_retry_countdown(retries: int) -> int:
    """Seconds before a task that could not reach the sources tries again."""
    # Full jitter: the workers that failed together do not all come back at the same second.
    return get_exponential_backoff_interval(
        factor=settings.MATCH_TASK_RETRY_BACKOFF,
        retries=retries,
        maximum=settings.MATCH_TASK_RETRY_BACKOFF_MAX,
        full_jitter=True,
    )
