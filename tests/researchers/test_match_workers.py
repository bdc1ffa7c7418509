"""Matching through real Celery worker processes on the real brokers, Redis and RabbitMQ, with
Semantic Scholar and OpenAlex answering from recordings over HTTP on 127.0.0.1. The workers are
other processes, so they need a database server."""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from celery import Celery
from django.utils import timezone
from werkzeug import Request, Response

from papers.models import Paper
from researchers.models import PaperMatchState
from tests.researchers.test_matching import BYLINES
from tests.sources.conftest import Sources
from tests.workers import BROKERS, WorkerPool, wait_for

pytestmark = pytest.mark.postgres

FINISHED = (PaperMatchState.MATCHED, PaperMatchState.UNKNOWN)
# Task states, as Flower or any monitor reads them (keys are per task id: no collision).
RESULT_BACKEND = "redis://127.0.0.1:6379/4"


class SlowSources(Sources):
    """Recorded answers, each paper batch held back a moment: the two workers' batches overlap
    in time, as they do against the real services' rate limits."""

    delay: float = 0.3

    def s2_paper_batch(self, request: Request) -> Response:
        time.sleep(self.delay)
        return super().s2_paper_batch(request)


@pytest.fixture
def served(local_server) -> SlowSources:
    sources = SlowSources(server=local_server)
    sources.install()
    return sources


@pytest.fixture(params=sorted(BROKERS))
def workers(request, served, tmp_path, transactional_db):
    broker = request.param
    base = served.server.url_for("").rstrip("/")
    pool = WorkerPool(
        broker=BROKERS[broker],
        tmp_path=tmp_path,
        settings={
            "SEMANTIC_SCHOLAR_API_URL": f"{base}/s2",
            "OPENALEX_API_URL": f"{base}/openalex",
            "ROR_API_URL": f"{base}/ror",
            "SEMANTIC_SCHOLAR_API_KEY": "test-key",
            "OPENALEX_EMAIL": "tests@wovepaper.example",
            "SEMANTIC_SCHOLAR_RATE": "1000",
            "OPENALEX_RATE": "1000",
            "ROR_RATE": "1000",
            "HTTP_RETRY_ATTEMPTS": "2",
            "HTTP_RETRY_BACKOFF": "0.01",
            "HTTP_TIMEOUT": "10",
            "MATCH_BATCH_SIZE": "3",
        },
    )
    pool.sender = Celery(broker=BROKERS[broker], backend=RESULT_BACKEND, set_as_current=False)
    try:
        yield pool
    finally:
        pool.close()
        pool.delete_queues(pool.sender, ["match", "default"])
        pool.sender.close()


def send(pool: WorkerPool, task: str, **kwargs) -> None:
    pool.sender.send_task(task, kwargs=kwargs, queue=pool.queue("match"))


def make_papers(paper_factory, *, first_day: datetime) -> dict[str, Paper]:
    return {
        arxiv_id: paper_factory(
            arxiv_id=arxiv_id, authors=authors, published=first_day + timedelta(days=n)
        )
        for n, (arxiv_id, authors) in enumerate(BYLINES.items())
    }


def all_finished(papers) -> bool:
    done = PaperMatchState.objects.filter(paper__in=papers, status__in=FINISHED).count()
    return done == len(papers)


def requested_arxiv_ids(served: Sources) -> tuple[Counter, Counter]:
    """How many times each arXiv id was asked of Semantic Scholar and of OpenAlex."""
    s2, openalex = Counter(), Counter()
    for _, path, what in served.requests:
        if path.endswith("/s2/paper/batch"):
            s2.update(i.removeprefix("ARXIV:") for i in what.split(","))
        elif path.endswith("/openalex/works"):
            openalex.update(re.findall(r"10\.48550/arxiv\.([^|]+)", what, flags=re.IGNORECASE))
    return s2, openalex


def wait_all_finished(papers, *workers) -> None:
    wait_for(
        lambda: all_finished(papers),
        timeout=180,
        what="every paper matched",
        on_timeout=lambda: "".join(w.output() for w in workers),
    )


def done(worker, task: str) -> bool:
    """Whether the worker logged a run of this task that ended (succeeded)."""
    return re.search(rf"Task {re.escape(task)}\[[^\]]+\] succeeded", worker.output()) is not None


def batches_matched(worker) -> int:
    """How many of this worker's tasks matched at least one paper (from its log)."""
    return len(re.findall(r"succeeded in [^:]*: \{[^}]*'papers': [1-9]", worker.output()))


def test_two_match_workers_never_send_the_same_request_twice(workers, served, paper_factory):
    """Two workers take backlog batches at the same time, as catch_up or a busy beat makes them:
    each paper is claimed by one batch, so each arXiv id is asked of each source once."""
    papers = make_papers(paper_factory, first_day=datetime(2024, 1, 1, tzinfo=UTC))
    first = workers.start("match-1", ["match"])
    second = workers.start("match-2", ["match"])
    # More tasks than batches of work: the surplus finds the backlog empty.
    for _ in range(2 * len(papers)):
        send(workers, "researchers.match_next_batch")
    wait_all_finished(papers.values(), first, second)
    s2, openalex = requested_arxiv_ids(served)
    assert set(s2) == set(papers), s2
    assert [i for i, n in s2.items() if n > 1] == []
    assert [i for i, n in openalex.items() if n > 1] == []
    assert set(openalex) <= set(papers) and openalex
    # Both took part: the claims, not one worker doing everything, kept the requests apart.
    assert batches_matched(first) and batches_matched(second)
    assert not PaperMatchState.objects.exclude(claim="").exists()


def test_a_harvest_hand_off_already_done_by_the_backlog_sends_no_request(
    workers, served, paper_factory
):
    """The backlog matched the new papers before the harvest's message for them was consumed:
    the message finds them tried since it was sent and asks nobody again."""
    papers = make_papers(paper_factory, first_day=timezone.now() - timedelta(days=3))
    requested_at = timezone.now().isoformat()
    # One batch takes them all, and starts no chain (whose batches would blur the log).
    worker = workers.start("match", ["match"], MATCH_BATCH_SIZE="100", MATCH_PARALLEL_BATCHES="0")
    send(workers, "researchers.match_next_batch")
    wait_for(
        lambda: done(worker, "researchers.match_next_batch"),
        timeout=120,
        what="the backlog batch done",
        on_timeout=worker.output,
    )
    assert all_finished(papers.values())
    asked = len(served.requests)
    send(
        workers,
        "researchers.match_papers",
        paper_ids=[p.pk for p in papers.values()],
        requested_at=requested_at,
    )
    wait_for(
        lambda: done(worker, "researchers.match_papers"),
        timeout=60,
        what="the hand-off consumed",
        on_timeout=worker.output,
    )
    assert len(served.requests) == asked


def test_a_paper_whose_match_message_was_lost_is_matched_by_the_sweep(
    workers, served, paper_factory
):
    """A paper two months old, never tried, between papers already matched (its harvest's
    message to matching was lost): beat's next batch reaches it."""
    papers = make_papers(paper_factory, first_day=timezone.now() - timedelta(days=60))
    lost = papers.pop("2302.13971")
    dates = sorted(p.published for p in papers.values())
    Paper.objects.filter(pk=lost.pk).update(published=dates[len(dates) // 2])
    for paper in papers.values():
        PaperMatchState.objects.create(
            paper=paper,
            status=PaperMatchState.MATCHED,
            published=paper.published,
            last_attempt_at=timezone.now(),
        )
    worker = workers.start("match", ["match"])
    send(workers, "researchers.match_next_batch")
    wait_for(
        lambda: PaperMatchState.objects.filter(paper=lost, status=PaperMatchState.MATCHED).exists(),
        timeout=120,
        what="the lost paper matched",
        on_timeout=worker.output,
    )
    s2, _ = requested_arxiv_ids(served)
    assert s2 == Counter({"2302.13971": 1})


def test_a_batch_that_cannot_reach_its_services_is_retried_then_fails(
    workers, served, paper_factory
):
    """Semantic Scholar unreachable: the task is retried with backoff on the same papers, then
    ends FAILURE, which is what a Celery monitor shows, instead of a "success" that says
    nothing was matched."""
    papers = make_papers(paper_factory, first_day=timezone.now() - timedelta(days=3))
    worker = workers.start(
        "match",
        ["match"],
        # A port nothing listens on: connection refused at once.
        SEMANTIC_SCHOLAR_API_URL="http://127.0.0.1:9/s2",
        MATCH_BATCH_SIZE="100",
        MATCH_TASK_RETRIES="2",
        MATCH_TASK_RETRY_BACKOFF="1",
        MATCH_TASK_RETRY_BACKOFF_MAX="2",
        CELERY_RESULT_BACKEND=RESULT_BACKEND,
    )
    result = workers.sender.send_task("researchers.match_next_batch", queue=workers.queue("match"))
    wait_for(
        lambda: result.state == "FAILURE",
        timeout=180,
        what="the task to fail",
        on_timeout=lambda: f"state {result.state}\n{worker.output()}",
    )
    assert type(result.result).__name__ == "SourcesUnreachable"
    assert "Semantic Scholar" in str(result.result)
    assert worker.output().count("retry: Retry in") == 2
    # The first try and both retries asked for the same papers; none was changed.
    states = PaperMatchState.objects.filter(paper__in=papers.values())
    assert states.count() == len(papers)
    assert {(s.status, s.attempts, s.claim) for s in states} == {(PaperMatchState.FAILED, 3, "")}
    result.forget()


def test_one_beat_batch_drains_the_backlog_through_a_chain_on_each_worker(
    workers, served, paper_factory
):
    """Beat sends one batch a minute; a batch that matched something queues the next ones, in
    up to MATCH_PARALLEL_BATCHES chains: the two workers drain a backlog of several batches
    from a single message, and still never ask for a paper twice."""
    papers = make_papers(paper_factory, first_day=datetime(2024, 1, 1, tzinfo=UTC))
    chains = {"MATCH_BATCH_SIZE": "2", "MATCH_PARALLEL_BATCHES": "2"}
    first = workers.start("match-1", ["match"], **chains)
    second = workers.start("match-2", ["match"], **chains)
    send(workers, "researchers.match_next_batch")
    wait_all_finished(papers.values(), first, second)
    s2, _ = requested_arxiv_ids(served)
    assert set(s2) == set(papers) and max(s2.values()) == 1
    assert batches_matched(first) and batches_matched(second)
    # Each chain ends with a batch that finds the backlog empty.
    wait_for(
        lambda: (first.output() + second.output()).count("'papers': 0") >= 2,
        timeout=60,
        what="both chains to end",
        on_timeout=lambda: first.output() + second.output(),
    )


class FirstBatchHangs(Sources):
    """Recorded answers, but the first paper batch asked of Semantic Scholar is not answered
    until the test lets it go: the worker that asked is mid-batch for as long as we like."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.asked = threading.Event()
        self.release = threading.Event()

    def s2_paper_batch(self, request: Request) -> Response:
        if not self.asked.is_set():
            self.asked.set()
            self.release.wait(timeout=120)
        return super().s2_paper_batch(request)


def test_a_killed_batchs_papers_are_matched_by_another_worker_within_a_lease(
    local_server, tmp_path, transactional_db, paper_factory
):
    """A batch holds its papers for a short lease that it renews while it works: a live batch
    waiting on a slow service keeps them (another worker's batch finds nothing to take), and
    when its worker is killed (-9) they are free within one lease and matched by the other
    worker's next backlog batch, first of the backlog."""
    served = FirstBatchHangs(server=local_server)
    served.install()
    base = local_server.url_for("").rstrip("/")
    lease = 3
    pool = WorkerPool(
        broker=BROKERS["redis"],
        tmp_path=tmp_path,
        settings={
            "SEMANTIC_SCHOLAR_API_URL": f"{base}/s2",
            "OPENALEX_API_URL": f"{base}/openalex",
            "ROR_API_URL": f"{base}/ror",
            "SEMANTIC_SCHOLAR_API_KEY": "test-key",
            "SEMANTIC_SCHOLAR_RATE": "1000",
            "OPENALEX_RATE": "1000",
            "ROR_RATE": "1000",
            "HTTP_RETRY_ATTEMPTS": "1",
            "HTTP_TIMEOUT": "60",
            "MATCH_BATCH_SIZE": "100",
            "MATCH_PARALLEL_BATCHES": "0",
            "MATCH_CLAIM_SECONDS": str(lease),
        },
    )
    pool.sender = Celery(broker=BROKERS["redis"], set_as_current=False)
    papers = make_papers(paper_factory, first_day=timezone.now() - timedelta(days=3))
    try:
        doomed = pool.start("match-1", ["match"])
        send(pool, "researchers.match_next_batch")
        wait_for(
            served.asked.is_set, timeout=60, what="the first batch to ask", on_timeout=doomed.output
        )
        held = PaperMatchState.objects.exclude(claim="")
        assert held.count() == len(papers)
        # Three leases later the live batch still holds every paper: the other worker's batch
        # takes none of them.
        other = pool.start("match-2", ["match"])
        time.sleep(3 * lease)
        send(pool, "researchers.match_next_batch")
        wait_for(
            lambda: done(other, "researchers.match_next_batch"),
            timeout=60,
            what="the other worker's batch",
            on_timeout=other.output,
        )
        assert "'papers': 0" in other.output()
        assert held.count() == len(papers)
        doomed.kill()
        killed_at = time.monotonic()
        served.release.set()

        def matched() -> bool:
            # Beat's batch, sent every second here instead of every minute.
            send(pool, "researchers.match_next_batch")
            return all_finished(papers.values())

        wait_for(
            matched,
            timeout=60,
            interval=1,
            what="the killed batch's papers matched",
            on_timeout=other.output,
        )
        assert time.monotonic() - killed_at < 10 * lease
        s2, _ = requested_arxiv_ids(served)
        # Asked twice: once by the killed batch (never answered to it), once by the other.
        assert set(s2) == set(papers) and set(s2.values()) == {2}
        assert not PaperMatchState.objects.exclude(claim="").exists()
    finally:
        served.release.set()
        pool.close()
        pool.delete_queues(pool.sender, ["match", "default"])
        pool.sender.close()
