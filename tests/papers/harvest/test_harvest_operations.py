"""A harvest as operators run it, when things around it break: a killed process and its lock,
a dead run in the admin, the database connection terminated, Redis going away, the broker
unreachable. Real processes, a real Redis the test starts on its own port, real PostgreSQL."""

from __future__ import annotations

import base64
import json
import logging
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from io import StringIO

import psycopg
import pytest
import redis
from django.core.cache import cache
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

from papers.harvest.lock import HarvestLocked, Heartbeat, harvest_lock, harvest_lock_break
from papers.harvest.runs import harvest_run_create
from papers.models import HarvestRun, Paper, PaperSearchDocument
from papers.search import PAPERS
from papers.tasks import harvest_resume_stale
from tests.papers.conftest import harvest_command, point_harvester_at
from tests.papers.harvest.faulty_oai import FaultyOAI
from tests.papers.test_tasks import _reset_broker_pools
from tests.workers import ROOT, database_url, wait_for
from wovepaper.celery import app as celery_app
from wovepaper.lib.search import backend_for, reset_backends

REDIS_CACHE = "redis://127.0.0.1:6379/4"


@pytest.fixture
def faulty(settings):
    with FaultyOAI(pages=6, per_page=25) as server:
        point_harvester_at(settings, server.url, interval=0, timeout=5.0, retries=1)
        yield server
        cache.clear()


def harvest_that_fails() -> tuple[HarvestRun, str]:
    """Run the command, expecting the one-line failure that names the run to resume."""
    with pytest.raises(CommandError) as info:
        harvest_command()
    run = HarvestRun.objects.get()
    message = str(info.value)
    assert message.startswith(f"harvest failed (run {run.pk}: resume with --resume {run.pk}): ")
    assert "Traceback" not in message
    return run, message


# ---------------------------------------------------------------------------------------------
# The lock and its heartbeat


def test_a_held_lock_is_kept_by_its_heartbeat_and_lapses_without_it(settings, db):
    # A TTL of 3 s (renewed every second) leaves the heartbeat thread room on a busy machine.
    settings.HARVEST_LOCK_TTL = 3
    cache.clear()
    run = harvest_run_create(set_spec="cs")
    with harvest_lock("cs") as lock, Heartbeat(lock, run.pk):
        time.sleep(6.5)  # twice the TTL: only the heartbeat keeps it
        assert cache.get(lock.key) == lock.token and not lock.lost.is_set()
        with pytest.raises(HarvestLocked):
            harvest_lock("cs").__enter__()
    # A holder that dies keeps nothing alive: its lock is gone within the TTL.
    dead = harvest_lock("math")
    dead.__enter__()
    with pytest.raises(HarvestLocked):
        harvest_lock("math").__enter__()
    time.sleep(3.5)
    with harvest_lock("math"):
        pass


def test_a_lock_taken_over_after_a_lapse_stops_the_old_holder(settings, db):
    settings.HARVEST_LOCK_TTL = 60
    cache.clear()
    with harvest_lock("cs") as lock:
        cache.set(lock.key, "someone else", timeout=60)  # as after a lapse and a new holder
        assert lock.renew() is False and lock.lost.is_set()
    assert cache.get(lock.key) == "someone else"  # not released: it is not ours


def test_the_admin_shows_a_run_whose_heartbeat_stopped_as_stale(admin_client, settings, db):
    settings.HARVEST_LOCK_TTL = 120
    dead = harvest_run_create(set_spec="cs")
    live = harvest_run_create(set_spec="math")
    done = harvest_run_create(set_spec="q-bio")
    HarvestRun.objects.filter(pk=dead.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    HarvestRun.objects.filter(pk=live.pk).update(heartbeat_at=timezone.now())
    HarvestRun.objects.filter(pk=done.pk).update(
        status=HarvestRun.Status.SUCCEEDED, heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    page = admin_client.get("/admin/papers/harvestrun/").content.decode()
    assert page.count("stale: heartbeat stopped") == 1
    stale = admin_client.get("/admin/papers/harvestrun/?liveness=stale")
    assert [r.pk for r in stale.context["cl"].result_list] == [dead.pk]
    alive = admin_client.get("/admin/papers/harvestrun/?liveness=alive")
    assert [r.pk for r in alive.context["cl"].result_list] == [live.pk]


def test_stale_runs_are_resumed_by_the_periodic_task(faulty, settings, db):
    settings.HARVEST_LOCK_TTL = 120
    run = harvest_run_create(metadata_prefix="arXiv")
    HarvestRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert harvest_resume_stale.delay().get() == [run.pk]
    run.refresh_from_db()
    assert (run.status, run.pages, Paper.objects.count()) == ("succeeded", 6, 150)
    assert harvest_resume_stale.delay().get() == []


def _other_sessions() -> int:
    """Sessions on this test's PostgreSQL database other than this process's."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


@pytest.mark.postgres
def test_a_harvest_killed_with_sigkill_is_resumed_at_once_with_break_lock(
    faulty, settings, transactional_db, tmp_path
):
    """kill -9 of a foreground harvest: its lock (in Redis, shared with this process) would
    block the set until it lapses; --break-lock sees that its holder is gone, frees it, and
    the resume completes the run with nothing lost."""
    settings.CACHES = {
        alias: {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_CACHE}
        for alias in ("default", "coordination")
    }
    settings.HARVEST_LOCK_TTL = 600  # long enough that only --break-lock can free the set
    cache.delete("harvest-lock:*")
    faulty.delay = 0.4
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "HARVEST_"))},
        "DJANGO_SETTINGS_MODULE": "wovepaper.settings",
        "DATABASE_URL": database_url(),
        "REDIS_URL": REDIS_CACHE,
        "ARXIV_OAI_URL": faulty.url,
        "ARXIV_MIN_INTERVAL": "0",
        "HARVEST_LOCK_TTL": "600",
    }
    log = (tmp_path / "harvest.log").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "harvest_arxiv",
            "--metadata-prefix",
            "arXiv",
            "--no-progress",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        run = wait_for(
            lambda: HarvestRun.objects.filter(pages__gte=2).first(),
            timeout=60,
            what="two pages harvested",
            on_timeout=lambda: (tmp_path / "harvest.log").read_text(),
        )
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        log.close()
    # A kill can land just after the harvest sent COMMIT: PostgreSQL then finishes that page's
    # transaction on its own, a moment later. A resume that read the run before it did would
    # harvest that page again (its papers counted unchanged, not created): resume once the
    # killed process's sessions are gone, as an operator's `ps` would show it gone.
    wait_for(lambda: not _other_sessions(), timeout=30, what="the killed harvest's sessions")
    run.refresh_from_db()
    assert run.status == HarvestRun.Status.RUNNING and 2 <= run.pages < 6

    with pytest.raises(CommandError, match="--break-lock frees the set"):
        harvest_command("--resume", str(run.pk))
    out, _ = harvest_command("--resume", str(run.pk), "--break-lock")
    assert "is gone" in out and f"harvest run {run.pk} succeeded" in out
    run.refresh_from_db()
    assert (run.status, run.pages, run.created) == ("succeeded", 6, 150)
    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == sorted(faulty.arxiv_ids())
    cache.clear()


def test_break_lock_refuses_while_the_holder_lives(settings, db):
    settings.HARVEST_LOCK_TTL = 120
    cache.clear()
    assert harvest_lock_break("cs") == "set 'cs' is not locked"
    run = harvest_run_create(set_spec="cs")
    HarvestRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
    with harvest_lock("cs") as lock:  # held by this very process, which is alive
        with pytest.raises(HarvestLocked, match=f"run {run.pk} of set 'cs' is alive"):
            harvest_lock_break("cs")
        assert cache.get(lock.key) == lock.token


# ---------------------------------------------------------------------------------------------
# Failures around the harvest: one clear message, the run to resume


@pytest.mark.postgres
def test_a_terminated_database_connection_fails_the_run_with_a_clear_message(
    faulty, transactional_db
):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        harvest_backend = cursor.fetchone()[0]

    def terminate(page: int) -> None:
        if page == 3:
            with psycopg.connect(database_url(), autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", [harvest_backend])

    faulty.on_request = terminate
    run, message = harvest_that_fails()
    # psycopg words it by when it notices: the server's notice, a closed or a lost connection.
    wordings = ("terminating connection", "closed", "connection is lost")
    assert any(wording in message for wording in wordings), message
    assert run.status == HarvestRun.Status.FAILED
    faulty.on_request = None
    out, _ = harvest_command("--resume", str(run.pk))
    run.refresh_from_db()
    assert (run.status, run.pages, Paper.objects.count()) == ("succeeded", 6, 150)


def test_redis_going_away_fails_the_run_with_a_clear_message(own_redis, faulty, settings, db):
    servers = [own_redis.start()]
    settings.ARXIV_MIN_INTERVAL = 0.01  # the rate limiter's slots are taken in Redis
    settings.CACHES = {
        alias: {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": own_redis.url,
        }
        for alias in ("default", "coordination")
    }

    def stop_redis(page: int) -> None:
        if page == 3 and servers[0].poll() is None:
            servers[0].kill()
            servers[0].wait(timeout=10)

    faulty.on_request = stop_redis
    run, message = harvest_that_fails()
    assert "ConnectionError" in message, message
    assert run.status == HarvestRun.Status.FAILED and 2 <= run.pages < 6
    faulty.on_request = None
    servers.append(own_redis.start())
    harvest_command("--resume", str(run.pk))
    run.refresh_from_db()
    assert (run.status, Paper.objects.count()) == ("succeeded", 150)


def test_with_the_broker_unreachable_every_paper_is_searchable_and_it_is_said_once(
    faulty, settings, transactional_db, caplog
):
    saved = (celery_app.conf.broker_url, celery_app.conf.task_always_eager)
    celery_app.conf.update(
        broker_url="redis://127.0.0.1:1/0", task_always_eager=False, broker_connection_timeout=1
    )
    _reset_broker_pools(celery_app)
    settings.HARVEST_ENQUEUE_MATCHING = True
    caplog.set_level(logging.INFO)
    try:
        started = time.monotonic()
        out, err = harvest_command()
        elapsed = time.monotonic() - started
    finally:
        celery_app.conf.update(broker_url=saved[0], task_always_eager=saved[1])
        _reset_broker_pools(celery_app)
    run = HarvestRun.objects.get()
    assert f"harvest run {run.pk} succeeded" in out and Paper.objects.count() == 150
    # One line in all: the command's, with the run's final counts; the log (stderr too, in a
    # terminal) does not say it again, nor does each failed send.
    assert err.count("the Celery broker is unreachable") == 1
    assert "matching (150 papers so far) is left for `manage.py catch_up`" in err
    said = [r.getMessage() for r in caplog.records if "broker" in r.getMessage()]
    assert said == [], said
    notices = [e for e in run.errors if "broker is unreachable" in e["message"]]
    assert len(notices) == 1, run.errors
    assert not [r for r in caplog.records if r.exc_info], "no traceback is logged"
    if connection.vendor == "postgresql":
        assert PaperSearchDocument.objects.count() == 150
    assert elapsed < 20, elapsed  # the broker was tried once, not once per page


@pytest.fixture
def catch_up_queues(settings):
    """The project's Celery app on Redis, each task catch_up queues routed to a queue of this
    test's own; yields a function that reads (and empties) what landed on each."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    tasks = ("researchers.match_next_batch", "papers.embed_papers", "papers.analyse_backlog")
    queues = {task: f"ops-catch-up-{os.getpid()}-{task}" for task in tasks}
    saved = {k: celery_app.conf[k] for k in ("broker_url", "task_always_eager", "task_routes")}
    celery_app.conf.update(
        broker_url=REDIS_CACHE,
        task_always_eager=False,
        task_routes={task: {"queue": queue} for task, queue in queues.items()},
    )
    _reset_broker_pools(celery_app)
    client = redis.Redis.from_url(REDIS_CACHE)

    def landed() -> dict[str, list[dict]]:
        messages = {
            task: [json.loads(m) for m in client.lrange(queue, 0, -1)]
            for task, queue in queues.items()
        }
        client.delete(*queues.values())
        return messages

    try:
        yield landed
    finally:
        landed()
        celery_app.conf.update(saved)
        _reset_broker_pools(celery_app)


def _args(message: dict) -> list:
    return json.loads(base64.b64decode(message["body"]))[0]


def test_catch_up_brings_every_derived_store_up_to_date(
    paper_factory, settings, transactional_db, catch_up_queues
):
    """After a harvest without its broker: the search documents still missing are built here;
    the papers without a vector go to the embed queue, the papers waiting for matching to the
    match queue (one batch per MATCH_BATCH_SIZE), the analysis backlog to its queue; each
    store says how many."""
    papers = [paper_factory() for _ in range(5)]
    if connection.vendor == "postgresql":
        PaperSearchDocument.objects.all().delete()  # as if no index task ever ran
    settings.MATCH_BATCH_SIZE = 2
    settings.ANALYSIS_BATCH_SIZE = 2
    out = StringIO()
    call_command("catch_up", stdout=out)
    landed = catch_up_queues()
    text = out.getvalue()
    assert len(landed["researchers.match_next_batch"]) == 3
    assert "matching: 5 papers waiting; queued: 3 researchers.match_next_batch tasks" in text
    embeds = landed["papers.embed_papers"]
    assert sorted(pk for m in embeds for pk in _args(m)[0]) == sorted(p.pk for p in papers)
    assert "embeddings: 5 papers without a vector; queued: 1 papers.embed_papers tasks" in text
    assert len(landed["papers.analyse_backlog"]) == 1
    # The backlog, not the batch that one task takes.
    assert (
        "analysis: 5 papers without a current analysis; queued: 1 papers.analyse_backlog task "
        "for the newest 2 of them"
    ) in text
    if connection.vendor == "postgresql":
        assert "search documents built: 5" in text
        assert PaperSearchDocument.objects.count() == 5


def test_catch_up_writes_the_papers_the_search_engine_lacks(
    paper_factory, settings, transactional_db, tmp_path, catch_up_queues
):
    """With SEARCH_ENGINE=tantivy the papers written while nothing fed the engine (its
    messages lost, the broker away) are searchable when catch_up ends."""
    settings.SEARCH_ENGINE = "tantivy"
    settings.SEARCH_INDEX_DIR = tmp_path / "search-index"
    reset_backends()
    try:
        papers = [paper_factory() for _ in range(4)]
        assert backend_for(PAPERS).document_count() == 0
        out = StringIO()
        call_command("catch_up", "--only", "search", stdout=out)
        reset_backends()  # as a web process opening the index afresh
        assert backend_for(PAPERS).document_count() == len(papers)
        assert "search engine (tantivy): documents written: papers 4" in out.getvalue()
    finally:
        reset_backends()
