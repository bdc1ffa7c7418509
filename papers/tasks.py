"""Celery tasks for harvesting: thin wrappers that take primitives and call papers.harvest.runs.

A harvest window runs as a chain of short tasks: each runs the window for at most
HARVEST_TASK_SECONDS, then replaces itself with a task resuming the run from its checkpoint
(the rest of a `harvest_daily` chain waits for the last one). No task outlives the brokers'
timeouts (Redis' visibility_timeout, RabbitMQ's consumer_timeout), and a task delivered twice
finds the set locked or the run done. A task redelivered after its worker died resumes the
run it had started (recorded as the run's task_id, which a task resuming the run leaves as it
is); one that finds its set locked by a dead worker waits for the lock to lapse
(HARVEST_LOCK_TTL) and tries again.
"""

from __future__ import annotations

import logging
import time
from datetime import date

from celery import chain, shared_task
from django.conf import settings

from wovepaper.lib import llm
from wovepaper.lib.chains import chain_slot_release, chain_slot_renew, chain_slots_take
from wovepaper.lib.queueing import SourcesUnreachable, send_now, sources_retry_countdown

from . import analysis, spelling
from .citations.fetch import citation_papers_due, citations_fetch
from .harvest import runs as harvest_runs
from .harvest.lock import HarvestLocked, harvest_runs_stale
from .models import HarvestRun, Paper
from .search import embedding_stage, postgres_documents

logger = logging.getLogger(__name__)

# The embedding sweep's chain slots (wovepaper.lib.chains).
EMBED_CHAINS = "embed"


def _date(value: str | None) -> date | None:
    return date.fromisoformat(value) if value else None


def _run_of_this_task(task_id: str | None, resume_run_id: int | None) -> HarvestRun | None:
    if resume_run_id is not None:
        return HarvestRun.objects.filter(pk=resume_run_id).first()
    if not task_id:
        return None
    return HarvestRun.objects.filter(task_id=task_id).order_by("-pk").first()


@shared_task(bind=True, name="papers.harvest_window", acks_late=True, ignore_result=False)
def harvest_window(
    self,
    set_spec: str = "",
    metadata_prefix: str | None = None,
    from_date: str | None = None,
    until_date: str | None = None,
    endpoint: str | None = None,
    resume_run_id: int | None = None,
    incremental: bool = False,
) -> dict:
    """Harvest one window of one set (dates as ISO strings). Safe to run twice: the upsert is
    idempotent and the set lock keeps a second delivery off a live run.

    A failed harvest is recorded on its HarvestRun (and resumed by the next incremental run);
    the task returns the summary instead of raising, so a chain of sets goes on.
    """
    inline = bool(self.request.called_directly or self.request.is_eager)
    task_id = "" if self.request.called_directly else (self.request.id or "")
    run = _run_of_this_task(task_id, resume_run_id)
    if run is not None:
        if run.status == HarvestRun.Status.SUCCEEDED:
            # Delivered again after the run was finished (by us or by another delivery).
            return harvest_runs.HarvestSummary.of(run).as_dict()
        resume_run_id = run.pk
    started: list[HarvestRun] = []
    try:
        run = harvest_runs.harvest_window(
            set_spec=set_spec,
            metadata_prefix=metadata_prefix,
            from_date=_date(from_date),
            until_date=_date(until_date),
            endpoint=endpoint,
            resume_run_id=resume_run_id,
            incremental=incremental,
            on_start=started.append,
            task_id=task_id,
            deadline=None if inline else time.monotonic() + settings.HARVEST_TASK_SECONDS,
        )
    except HarvestLocked as exc:
        if inline or self.request.retries >= settings.HARVEST_LOCKED_RETRIES:
            logger.info("harvest of %r skipped: %s", set_spec, exc)
            summary = harvest_runs.HarvestSummary(
                status="locked", set_spec=set_spec, error=str(exc)
            )
            return summary.as_dict()
        # Perhaps the lock of a worker that died running this very run: it lapses by then.
        raise self.retry(countdown=settings.HARVEST_LOCK_TTL, max_retries=None) from exc
    except Exception as exc:
        run_id = started[0].pk if started else resume_run_id
        message = harvest_runs.harvest_failure_message(run_id, exc)
        logger.error("%s", message)
        if not started:
            return harvest_runs.HarvestSummary(
                status="failed", run_id=run_id, set_spec=set_spec, error=message
            ).as_dict()
        return harvest_runs.HarvestSummary.of(started[0], error=message).as_dict()
    if run.status == HarvestRun.Status.RUNNING:
        # Past HARVEST_TASK_SECONDS: the rest of the run goes on in a task of its own.
        logger.info("harvest run %s: page %s reached, continuing in a new task", run.pk, run.pages)
        return self.replace(harvest_window.si(resume_run_id=run.pk))
    return harvest_runs.HarvestSummary.of(run).as_dict()


@shared_task(name="papers.harvest_daily")
def harvest_daily() -> list[str]:
    """The daily incremental harvest of settings.HARVEST_SETS, one window task per set.

    The sets run one after another (a chain): arXiv's rate limit is global anyway, and papers
    cross-listed in two sets are then never upserted by two transactions at once.
    """
    sets = list(settings.HARVEST_SETS)
    if sets:
        chain(*(harvest_window.si(set_spec=s, incremental=True) for s in sets)).apply_async()
    return sets


@shared_task(name="papers.harvest_resume_stale")
def harvest_resume_stale() -> list[int]:
    """Resume every run whose process died (its heartbeat stopped), from its checkpoint."""
    runs = list(harvest_runs_stale().values_list("pk", flat=True))
    for run_id in runs:
        logger.warning("harvest run %s: its heartbeat stopped; resuming it", run_id)
        send_now("papers.harvest_window", kwargs={"resume_run_id": run_id})
    return runs


@shared_task(name="papers.index_search", acks_late=True)
def index_search(paper_ids: list[int]) -> int:
    """Build the search documents of papers a harvest page created or changed."""
    return postgres_documents.search_index_papers(paper_ids)


@shared_task(bind=True, name="papers.count_written_words", acks_late=True)
def count_written_words(self, go_on: bool = False) -> dict:
    """Count the words papers write, the vocabulary a misspelt search is corrected against
    (papers.spelling): celery beat starts a count daily, unless one is moving; each link counts
    for at most HARVEST_TASK_SECONDS, as a harvest's do (inside the brokers' timeouts), then
    queues the next, which goes on from where the last batch's transaction left the count."""
    inline = bool(self.request.called_directly or self.request.is_eager)
    stale = 2 * settings.HARVEST_TASK_SECONDS
    count = spelling.word_count_running(stale_after=stale)
    if count is None:
        count = spelling.word_count_start()
    elif not go_on:
        return {"count": count.pk, "already_running": True}
    position = count.counted_through
    done = spelling.word_count_go_on(
        count, seconds=None if inline else settings.HARVEST_TASK_SECONDS
    )
    moved = count.counted_through != position
    if not done and moved:
        send_now("papers.count_written_words", kwargs={"go_on": True})
    return {"count": count.pk, "counted_through": count.counted_through, "done": done}


@shared_task(name="papers.index_search_pending", acks_late=True)
def index_search_pending() -> int:
    """The periodic catch-up: whatever a lost task or an interrupted import left unindexed."""
    return postgres_documents.search_index_pending()


@shared_task(bind=True, name="papers.analyse_paper", acks_late=True, max_retries=5)
def analyse_paper(self, paper_id: int) -> bool:
    """Analyse one paper (papers.analysis). A rate limit waits as long as the service asks
    (capped at HTTP_RETRY_AFTER_MAX); a timeout or an unreachable service backs off."""
    paper = Paper.objects.filter(pk=paper_id, is_deleted=False).first()
    if paper is None:
        return False
    try:
        analysis.analyse_paper(paper)
    except llm.ModelRateLimited as exc:
        wait = min(exc.retry_after or 60, settings.HTTP_RETRY_AFTER_MAX)
        raise self.retry(exc=exc, countdown=wait) from exc
    except (llm.ModelTimeout, llm.ModelUnavailable) as exc:
        raise self.retry(exc=exc, countdown=60 * 2**self.request.retries) from exc
    return True


@shared_task(name="papers.analyse_backlog", acks_late=True)
def analyse_backlog() -> int:
    """Celery beat: the newest ANALYSIS_BATCH_SIZE papers without a current analysis, each in
    a task of its own (a rate limit then delays one paper, not the batch)."""
    ids = list(
        analysis.papers_needing_analysis().values_list("pk", flat=True)[
            : settings.ANALYSIS_BATCH_SIZE
        ]
    )
    for paper_id in ids:
        send_now("papers.analyse_paper", paper_id)
    return len(ids)


@shared_task(name="papers.embed_papers", acks_late=True)
def embed_papers(paper_ids: list[int]) -> int:
    """Embed the papers a harvest page or an import batch created or changed (queue `embed`)."""
    return embedding_stage.embed_papers(paper_ids)


@shared_task(bind=True, name="papers.embed_pending", acks_late=True)
def embed_pending(self, chain: str | None = None, after: int = 0) -> dict:
    """Celery beat's sweep, and each link of its chains: claim the next EMBED_BATCH_SIZE
    pending papers past id `after` that no other batch holds, and embed them
    (embedding_stage: their vectors go to the vector index as the batch commits). Redelivered,
    it embeds nothing twice: what is done is no longer pending, what is held is left alone.

    Under a worker, a batch that holds papers queues its chain's next batch (`chain`, a slot's
    token) past the last id it looked at, and starts chains in the free slots, up to
    EMBED_PARALLEL_BATCHES: before it embeds, so that an idle embed process takes the next
    batch at once and every process is kept busy. Short tasks, which a harvest page's messages
    interleave with."""
    inline = bool(self.request.called_directly or self.request.is_eager)
    holds_slot = (
        chain_slot_renew(EMBED_CHAINS, chain, seconds=settings.EMBED_CHAIN_SECONDS)
        if chain
        else False
    )
    batch = embedding_stage.batch_claim(after=after)
    if batch is None or inline:
        if holds_slot and chain:
            chain_slot_release(EMBED_CHAINS, chain)
        written = embedding_stage.batch_embed(batch) if batch else 0
        return {"embedded": written, "last": batch.last if batch else None}
    followers = [chain] if holds_slot and chain else []
    followers.extend(
        chain_slots_take(
            EMBED_CHAINS,
            slots=settings.EMBED_PARALLEL_BATCHES,
            seconds=settings.EMBED_CHAIN_SECONDS,
        )
    )
    for token in followers:
        send_now("papers.embed_pending", kwargs={"chain": token, "after": batch.last})
    written = embedding_stage.batch_embed(batch)
    return {"embedded": written, "last": batch.last, "chains_continued": len(followers)}


@shared_task(bind=True, name="papers.fetch_citations")
def fetch_citations(self, paper_ids: list[int] | None = None, limit: int = 100) -> dict:
    """Fetch citations for these papers, or for the next `limit` papers due
    (papers.citations.fetch.citation_papers_due: never asked, then the stalest). Idempotent. A
    source that cannot answer changes nothing of its own; the task is retried with backoff for
    those papers, then fails (as matching's)."""
    ids = [int(pk) for pk in paper_ids] if paper_ids else citation_papers_due(limit=limit)
    result = citations_fetch(ids)
    summary = {
        "papers": result.papers,
        "edges": result.edges,
        "citing_edges": result.citing_edges,
        "detailed": result.detailed,
        "set_aside": result.set_aside,
        "errors": result.errors,
        "detail_errors": result.detail_errors,
    }
    if result.detail_errors:
        # Not retried: those papers got the paper batch's references instead.
        logger.warning("fetch_citations, references endpoint: %s", "; ".join(result.detail_errors))
    if result.failed:
        logger.warning("fetch_citations: %s", "; ".join(result.errors))
        if not (self.request.called_directly or self.request.is_eager):
            raise self.retry(
                exc=SourcesUnreachable("; ".join(result.errors)),
                countdown=sources_retry_countdown(self.request.retries),
                max_retries=settings.MATCH_TASK_RETRIES,
                kwargs={"paper_ids": ids},
            )
    return summary
