"""Celery tasks for harvesting: inline (the embedded default) and through a real worker on Redis."""

from __future__ import annotations

import inspect
import uuid
from datetime import date

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from kombu import pools as kombu_pools

from papers.harvest.handoff import HandOff
from papers.harvest.runs import harvest_lock
from papers.models import HarvestRun, Paper
from papers.tasks import harvest_daily, harvest_window
from tests.papers.conftest import oai_bytes, requested, serve, serve_arxiv_chain
from wovepaper.celery import app as celery_app

REDIS = "redis://127.0.0.1:6379/0"
ARXIV_WINDOW = {"metadataPrefix": "arXiv", "set": "physics", "from": "2007-05-23"}


def _reset_broker_pools(app):
    # Celery caches its broker connection pool on first use; a changed broker URL needs a new one.
    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    app.amqp._producer_pool = None
    # kombu keeps its own producer pools per connection URL; a stale one points at the pool
    # just closed (and even eager tasks acquire a producer for its serializer).
    kombu_pools.reset()
    # The result backend is cached per thread as well.
    app._local.__dict__.pop("backend", None)


@pytest.fixture
def redis_celery(settings):
    """The project's Celery app on the Redis broker, with queues no one else consumes."""
    queue = f"test-harvest-{uuid.uuid4().hex[:10]}"
    keys = (
        "broker_url",
        "result_backend",
        "task_always_eager",
        "task_default_queue",
        "task_routes",
    )
    saved = {key: celery_app.conf[key] for key in keys}
    celery_app.conf.update(
        broker_url=REDIS,
        result_backend=REDIS,
        task_always_eager=False,
        task_default_queue=queue,
        task_routes={"researchers.match_papers": {"queue": f"{queue}-matching"}},
    )
    _reset_broker_pools(celery_app)
    settings.HARVEST_ENQUEUE_MATCHING = True
    try:
        yield queue
    finally:
        with celery_app.connection_for_write() as conn:
            for name in (queue, f"{queue}-matching"):
                conn.default_channel.client.delete(name)
        celery_app.conf.update(saved)
        _reset_broker_pools(celery_app)


def _matching_messages(queue: str) -> list[tuple[str, dict]]:
    messages = []
    with celery_app.connection_for_read() as conn:
        simple = conn.SimpleQueue(f"{queue}-matching")
        try:
            while True:
                try:
                    message = simple.get(timeout=1)
                except simple.Empty:
                    return messages
                args, kwargs, _embed = message.decode()
                task = celery_app.tasks[message.headers["task"]]
                # As the worker will call it: positional ids bound to their parameter's name.
                bound = inspect.signature(task.run).bind(*args, **kwargs)
                messages.append((message.headers["task"], dict(bound.arguments)))
                message.ack()
        finally:
            simple.close()


def test_window_task_runs_inline_and_returns_a_summary(oai_url, httpserver, db):
    serve_arxiv_chain(httpserver, window=ARXIV_WINDOW)
    summary = harvest_window.delay(
        set_spec="physics", metadata_prefix="arXiv", from_date="2007-05-23"
    ).get()
    run = HarvestRun.objects.get()
    assert summary == {
        "status": "succeeded",
        "run_id": run.pk,
        "set_spec": "physics",
        "pages": 3,
        "counts": {"created": 2002, "updated": 0, "unchanged": 0, "rejected": 0, "deleted": 0},
        "next_from": "2013-05-24",
        "error": "",
    }


def test_window_task_skips_a_locked_set_and_records_failures(oai_url, httpserver, db):
    with harvest_lock("physics"):
        summary = harvest_window(set_spec="physics", metadata_prefix="arXiv")
    assert summary["status"] == "locked" and requested(httpserver) == []
    serve(
        httpserver,
        {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": "physics"},
        oai_bytes("current_error_badArgument.xml"),
    )
    summary = harvest_window(set_spec="physics")
    run = HarvestRun.objects.get()
    assert summary["status"] == "failed" and summary["run_id"] == run.pk
    assert "badArgument" in summary["error"]


def test_daily_task_harvests_each_configured_set_incrementally(oai_url, httpserver, db, settings):
    settings.HARVEST_SETS = ["cs", "math"]
    for set_spec in ("cs", "math"):
        serve(
            httpserver,
            {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": set_spec},
            oai_bytes("current_error_noRecordsMatch.xml"),
        )
    assert harvest_daily.delay().get() == ["cs", "math"]
    runs = HarvestRun.objects.order_by("pk")
    assert [(r.set_spec, r.status, r.from_date) for r in runs] == [
        ("cs", "succeeded", None),
        ("math", "succeeded", None),
    ]
    # The next day starts from the day of the first responseDate.
    httpserver.clear()
    for set_spec in ("cs", "math"):
        serve(
            httpserver,
            {
                "verb": "ListRecords",
                "metadataPrefix": "arXivRaw",
                "set": set_spec,
                "from": "2026-05-02",
            },
            oai_bytes("current_error_noRecordsMatch.xml"),
        )
    harvest_daily.delay().get()
    assert list(HarvestRun.objects.order_by("pk").values_list("from_date", flat=True))[2:] == [
        date(2026, 5, 2),
        date(2026, 5, 2),
    ]


def test_beat_schedule_runs_the_daily_harvest():
    entry = settings.CELERY_BEAT_SCHEDULE["papers-harvest-daily"]
    assert entry["task"] == harvest_daily.name == "papers.harvest_daily"
    assert entry["task"] in celery_app.tasks
    assert "papers.harvest_window" in celery_app.tasks


def test_matching_is_not_enqueued_without_a_broker_by_default(db):
    assert settings.HARVEST_ENQUEUE_MATCHING is bool(settings.CELERY_BROKER_URL)
    assert HandOff().match([1, 2, 3]) == (1 if settings.HARVEST_ENQUEUE_MATCHING else 0)


def test_an_unreachable_broker_never_fails_the_harvest(settings, db):
    saved = (celery_app.conf.broker_url, celery_app.conf.task_always_eager)
    # Port 1 refuses connections: publishing fails after Celery's own short retries.
    celery_app.conf.update(
        broker_url="redis://127.0.0.1:1/0", task_always_eager=False, broker_connection_timeout=0.5
    )
    _reset_broker_pools(celery_app)
    settings.HARVEST_ENQUEUE_MATCHING = True
    try:
        handoff = HandOff()
        assert handoff.match([1, 2]) == 0
        assert handoff.broker_down and handoff.matching_not_queued == 2
    finally:
        celery_app.conf.update(broker_url=saved[0], task_always_eager=saved[1])
        _reset_broker_pools(celery_app)


def test_harvest_through_a_real_worker_on_redis(
    oai_url, httpserver, transactional_db, redis_celery
):
    """A real Celery worker (a thread of this process) consumes the task from Redis, harvests
    over HTTP into the test database, and the matching hand-off lands on the broker by name."""
    serve_arxiv_chain(httpserver, window=ARXIV_WINDOW)
    with start_worker(
        celery_app,
        pool="solo",
        perform_ping_check=False,
        queues=[redis_celery],
        shutdown_timeout=30,
    ):
        result = harvest_window.apply_async(
            kwargs={"set_spec": "physics", "metadata_prefix": "arXiv", "from_date": "2007-05-23"},
            queue=redis_celery,
        )
        summary = result.get(timeout=120)
    assert summary["status"] == "succeeded", summary
    assert summary["counts"]["created"] == 2002
    assert Paper.objects.count() == 2002
    run = HarvestRun.objects.get()
    assert (run.status, run.pages) == ("succeeded", 3)
    # One message per page (each page under 500 papers would be one; these are 1,000 → 2).
    messages = _matching_messages(redis_celery)
    assert {task for task, _ in messages} == {"researchers.match_papers"}
    sent_ids = sorted(i for _, kwargs in messages for i in kwargs["paper_ids"])
    assert sent_ids == sorted(Paper.objects.values_list("pk", flat=True))
    assert len(messages) == 2 + 2 + 1
