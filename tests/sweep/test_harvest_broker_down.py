"""A harvest whose broker goes away mid-run, with real worker processes (#30 item 15): a search
worker and a harvest worker on a broker of the test's own (a Redis on a port of its own, stopped
mid-run), with the search engine `tantivy`, as deploy/ and docs/operations.md run them."""

from __future__ import annotations

import threading

import pytest
from celery import Celery

from papers.models import HarvestRun, Paper
from papers.search import PAPERS
from tests.papers.harvest.faulty_oai import FaultyOAI
from tests.workers import WorkerPool, wait_for
from wovepaper.lib.search import backend_for, reset_backends

pytestmark = pytest.mark.postgres

PAGES, PER_PAGE = 8, 25


@pytest.fixture
def engine(settings, tmp_path):
    settings.SEARCH_ENGINE = "tantivy"
    settings.SEARCH_INDEX_DIR = tmp_path / "search-index"
    reset_backends()
    yield settings.SEARCH_INDEX_DIR
    reset_backends()


def searchable() -> int:
    """How many papers the engine finds, as a web process opening the index now would."""
    reset_backends()
    return backend_for(PAPERS).document_count()


@pytest.fixture
def pool(own_redis, engine, tmp_path, transactional_db):
    broker = own_redis.start()
    pool = WorkerPool(
        broker=own_redis.url,
        tmp_path=tmp_path,
        settings={
            "ARXIV_MIN_INTERVAL": "0",
            "ARXIV_OAI_TIMEOUT": "20",
            "SEARCH_ENGINE": "tantivy",
            "SEARCH_INDEX_DIR": str(engine),
            "HARVEST_ENQUEUE_MATCHING": "1",
            "EMBED_AFTER_WRITES": "1",
            # Each page of this harvest comes after the process stopped leaving the broker alone.
            "QUEUE_RETRY_AFTER": "0.2",
            "WORKER_HEALTH_DIR": str(tmp_path / "health"),
        },
    )
    pool.broker_process = broker
    try:
        yield pool
    finally:
        pool.close()


def test_a_harvest_whose_broker_goes_away_ends_with_every_paper_searchable(pool, own_redis):
    """Pages 1-2 reach the search worker through the broker; then the broker stops. Every
    paper is searchable when the run ends, the run's errors hold the notice once, and the
    worker's log has no traceback."""
    resume = threading.Event()

    def hold_page_3(page: int) -> None:
        if page == 3:
            resume.wait(timeout=60)

    with FaultyOAI(pages=PAGES, per_page=PER_PAGE) as server:
        server.on_request = hold_page_3
        server.delay = 0.5
        search = pool.start("search", ["search"])
        harvest = pool.start("harvest", ["harvest"], ARXIV_OAI_URL=server.url)
        sender = Celery(broker=own_redis.url, set_as_current=False)
        sender.send_task(
            "papers.harvest_window",
            kwargs={"metadata_prefix": "arXiv", "set_spec": f"ops-{pool.prefix}"},
            queue=pool.queue("harvest"),
        )
        sender.close()
        wait_for(
            lambda: searchable() >= 2 * PER_PAGE,
            timeout=60,
            what="pages 1-2 searchable through the search worker",
            on_timeout=lambda: harvest.output() + search.output(),
        )
        pool.broker_process.kill()
        pool.broker_process.wait(timeout=10)
        resume.set()
        wait_for(
            lambda: HarvestRun.objects.filter(status=HarvestRun.Status.SUCCEEDED).exists(),
            timeout=120,
            what="the run to end",
            on_timeout=harvest.output,
        )
    run = HarvestRun.objects.get()
    assert (run.pages, Paper.objects.count()) == (PAGES, PAGES * PER_PAGE)
    assert searchable() == PAGES * PER_PAGE
    notices = [e for e in run.errors if "broker is unreachable" in e["message"]]
    assert len(notices) == 1, run.errors
    # One line, the run's notice (the failed send says nothing of its own); Celery's "Couldn't
    # ack" of the task, once, without its traceback.
    log = harvest.output()
    assert log.count("could not queue") == 0 and log.count("broker is unreachable") == 1, log
    assert "Traceback" not in log, log[-6000:]
