"""Embedding through real Celery worker processes on the real brokers, Redis and RabbitMQ, as an
operator runs them: two embed workers and the search queue's one vector index writer, with the
bundled model (no download). The workers are other processes, so they need a database server.

A paper embedded twice shows in the workers' own logs: each task logs how many vectors it
wrote, and the sum over both workers is the number of papers only if none was written twice.
"""

from __future__ import annotations

import ast
import json
import re

import pytest
from celery import Celery
from django.db import transaction

from papers.models import PaperEmbedding, PaperEmbeddingClaim
from papers.search import PAPERS
from papers.search.embedding_stage import papers_pending
from tests.workers import BROKERS, WorkerPool, wait_for
from wovepaper.lib.embeddings import text_encoder
from wovepaper.lib.search.vectors import UsearchBackend

pytestmark = pytest.mark.postgres

PAPERS_COUNT = 48
SUCCEEDED = r"Task papers\.embed_\w+\[[^\]]+\] succeeded in [^:]*: (.*)"
# Redis hands out again what is not acknowledged within visibility_timeout: shortened below a
# batch's time, every task is delivered to the other worker while the first still runs it.
REDIS_REDELIVERING = {
    "visibility_timeout": 1,
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
}


@pytest.fixture(scope="module")
def exported_model():
    # The first embedding exports the model (tens of seconds): once, here, not in each worker.
    text_encoder().encode(["warm"])


def make_pool(broker: str, tmp_path, **settings: str) -> WorkerPool:
    pool = WorkerPool(
        broker=BROKERS[broker],
        tmp_path=tmp_path,
        settings={
            "EMBEDDING_THREADS": "1",
            "EMBED_BATCH_SIZE": "4",
            "EMBED_PARALLEL_BATCHES": "2",
            "VECTOR_ENGINE": "usearch",
            "VECTOR_INDEX_DIR": str(tmp_path / "vector-index"),
            **settings,
        },
    )
    pool.sender = Celery(broker=BROKERS[broker], set_as_current=False)
    options = json.loads(settings.get("CELERY_BROKER_TRANSPORT_OPTIONS", "{}"))
    pool.sender.conf.broker_transport_options = options
    return pool


def close(pool: WorkerPool) -> None:
    pool.close()
    pool.delete_queues(pool.sender, ["embed", "search", "default"])
    pool.sender.close()


@pytest.fixture(params=sorted(BROKERS))
def workers(request, tmp_path, transactional_db, exported_model):
    pool = make_pool(request.param, tmp_path)
    try:
        yield pool
    finally:
        close(pool)


@pytest.fixture
def papers(paper_factory):
    topics = ["superconducting qubits", "dark matter halos", "graph neural networks"]
    return [
        paper_factory(
            title=f"On {topics[n % 3]}, part {n}",
            # As long as the model reads (256 word pieces), as real abstracts mostly are.
            abstract=" ".join(f"We study {topics[n % 3]} in setting {n}.{k}." for k in range(40)),
        )
        for n in range(PAPERS_COUNT)
    ]


def sweep(pool: WorkerPool) -> None:
    """What celery beat sends every EMBED_SWEEP_SECONDS."""
    pool.sender.send_task("papers.embed_pending", queue=pool.queue("embed"))


def vectors_written(worker) -> int:
    """The vectors this worker's tasks wrote, from its log's task results."""
    total = 0
    for result in re.findall(SUCCEEDED, worker.output()):
        value = ast.literal_eval(result)
        total += value["embedded"] if isinstance(value, dict) else value
    return total


def index_size(tmp_path) -> int:
    source = PAPERS.vectors
    assert source is not None
    backend = UsearchBackend(PAPERS, source, directory=tmp_path / "vector-index")
    return backend.size()


def watch(tmp_path, *workers) -> list[tuple[int, int]]:
    """(stored, indexed) vectors, sampled until every paper is embedded and indexed."""
    seen: list[tuple[int, int]] = []

    def done() -> bool:
        seen.append((PaperEmbedding.objects.count(), index_size(tmp_path)))
        return seen[-1] == (PAPERS_COUNT, PAPERS_COUNT)

    wait_for(
        done,
        timeout=240,
        what="every paper embedded and in the vector index",
        on_timeout=lambda: f"{seen[-5:]}\n" + "".join(w.output() for w in workers),
        interval=0.05,
    )
    return seen


def test_two_embed_workers_embed_no_paper_twice_and_the_index_follows_each_batch(
    workers, papers, tmp_path
):
    """Beat's sweep sent twice (two beat ticks, or a redelivery): in short claimed batches,
    chained on both workers, each paper is embedded once, by one of them, and the vector index
    takes each batch's vectors as it commits, not when the sweep ends."""
    search = workers.start("search", ["search"])
    first = workers.start("embed-1", ["embed"])
    second = workers.start("embed-2", ["embed"])
    sweep(workers)
    sweep(workers)
    seen = watch(tmp_path, first, second, search)
    assert vectors_written(first) + vectors_written(second) == PAPERS_COUNT
    assert vectors_written(first) and vectors_written(second)  # both took part
    # While papers were still pending, vectors were already searchable.
    assert any(0 < indexed and stored < PAPERS_COUNT for stored, indexed in seen), seen
    assert not papers_pending().exists() and not PaperEmbeddingClaim.objects.exists()


def test_batches_delivered_again_while_they_run_embed_nothing_twice(
    tmp_path, transactional_db, exported_model, papers
):
    """Redis with a visibility timeout shorter than a batch: a batch message reaches the other
    worker while the first still runs it, as a long sweep did past Redis' hour. The second
    delivery finds the papers claimed and takes others, or none.

    How long a batch takes is the machine's business, so the first batch is made long, not
    hoped long: an open transaction holds an uncommitted vector row for the first paper, and the
    batch that holds that paper waits at its write until the redelivery has been seen."""
    pool = make_pool(
        "redis",
        tmp_path,
        EMBED_BATCH_SIZE="24",
        CELERY_BROKER_TRANSPORT_OPTIONS=json.dumps(REDIS_REDELIVERING),
    )

    def received() -> list[str]:
        return re.findall(
            r"Task papers\.embed_pending\[([^\]]+)\] received", first.output() + second.output()
        )

    try:
        search = pool.start("search", ["search"])
        first = pool.start("embed-1", ["embed"])
        second = pool.start("embed-2", ["embed"])
        with transaction.atomic():
            PaperEmbedding.objects.create(
                paper=papers[0], model="held-by-the-test", dimensions=1, vector=b"\0\0"
            )
            sweep(pool)
            wait_for(
                lambda: len(received()) > len(set(received())),
                timeout=120,
                what="a batch delivered again while it runs",
                on_timeout=lambda: first.output() + second.output(),
            )
            transaction.set_rollback(True)
        watch(tmp_path, first, second, search)
        assert vectors_written(first) + vectors_written(second) == PAPERS_COUNT
        assert PaperEmbedding.objects.count() == index_size(tmp_path) == PAPERS_COUNT
        assert not PaperEmbedding.objects.filter(model="held-by-the-test").exists()
    finally:
        close(pool)
