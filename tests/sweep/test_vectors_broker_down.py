"""Vectors whose index messages were lost are not lost for good: with the broker stopped while
two embed batches commit (`manage.py embed_papers`, a real process), the search worker's next
periodic round, or `manage.py catch_up`, puts every vector into the index and says how many it
repaired. Real processes on a Redis broker of the test's own, real PostgreSQL, the bundled
model."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from celery import Celery

from papers.models import PaperEmbedding
from papers.search import PAPERS
from tests.workers import ROOT, WorkerPool, wait_for
from wovepaper.lib.embeddings import text_encoder
from wovepaper.lib.search.vectors import UsearchBackend

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def exported_model():
    # The first embedding exports the model: once, here, not in each process.
    text_encoder().encode(["warm"])


def manage(pool: WorkerPool, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=pool.env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def indexed(tmp_path) -> int:
    source = PAPERS.vectors
    assert source is not None
    return UsearchBackend(PAPERS, source, directory=tmp_path / "vector-index").size()


@pytest.mark.parametrize("repair", ["sweep", "catch_up"])
def test_vectors_committed_with_the_broker_down_reach_the_index(
    repair, own_redis, tmp_path, transactional_db, exported_model, paper_factory
):
    own_redis.start()
    pool = WorkerPool(
        broker=own_redis.url,
        tmp_path=tmp_path,
        settings={
            "EMBEDDING_THREADS": "1",
            "VECTOR_ENGINE": "usearch",
            "VECTOR_INDEX_DIR": str(tmp_path / "vector-index"),
            "QUEUE_PUBLISH_TIMEOUT": "2",
        },
    )
    sender = Celery(broker=own_redis.url, set_as_current=False)
    try:
        first = [paper_factory(title=f"Indexed paper {n}", abstract="On qubits.") for n in range(2)]
        search = pool.start("search", ["search"])
        manage(pool, "embed_papers", "--no-progress")
        wait_for(lambda: indexed(tmp_path) == 2, timeout=60, what="the first vectors indexed")
        search.stop()

        own_redis.stop_all()
        lost = [paper_factory(title=f"Lost paper {n}", abstract="On halos.") for n in range(8)]
        down = manage(pool, "embed_papers", "--no-progress", "--batch-size", "4")
        assert PaperEmbedding.objects.count() == len(first) + len(lost)
        log = down.stdout + down.stderr
        assert "could not queue search.index_vectors" in log, log
        assert indexed(tmp_path) == 2  # the two batches' vectors are stored, not indexed

        own_redis.start()
        search = pool.start("search-again", ["search"])
        if repair == "sweep":
            # What celery beat sends every VECTOR_RECONCILE_SECONDS.
            sender.send_task("search.reconcile_vectors", queue=pool.queue("search"))
            wait_for(
                lambda: "reconciled:" in search.output(),
                timeout=120,
                what="the round's report",
                on_timeout=search.output,
            )
            assert re.search(
                r"vector index of papers reconciled: 10 stored vectors examined, 8 missing "
                r"from the index, 0 there without a current vector; 8 repaired",
                search.output(),
            ), search.output()
        else:
            said = manage(pool, "catch_up", "--only", "vectors").stdout
            assert (
                "vector index (usearch) of papers: 10 stored vectors examined; missing from the "
                "index: 8; there without a current vector: 0; queued for the search worker: 8"
            ) in said, said
        wait_for(
            lambda: indexed(tmp_path) == 10,
            timeout=120,
            what="every vector in the index",
            on_timeout=search.output,
        )
        again = manage(pool, "catch_up", "--only", "vectors").stdout
        assert "missing from the index: 0; there without a current vector: 0" in again, again
    finally:
        pool.close()
        sender.close()
