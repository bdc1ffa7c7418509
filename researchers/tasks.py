"""Celery tasks for matching: thin wrappers over researchers.matching and
researchers.source_figures."""

from __future__ import annotations

import logging
from datetime import datetime

from celery import shared_task
from django.conf import settings

from wovepaper.lib.http import ServiceError
from wovepaper.lib.queueing import (
    SourcesUnreachable,
    send_after_commit,
    send_now,
    sources_retry_countdown,
)

from .curation.same_person import same_person_merge
from .identity_links import identity_links_export
from .institution_members import institutions_refresh, researcher_institution_ids
from .matching import BatchResult, match_run
from .matching.chains import chain_slot_release, chain_slot_renew, chain_slots_take
from .source_figures import researchers_refresh_figures, researchers_with_stale_figures

logger = logging.getLogger(__name__)


def _summary(run) -> dict:
    return {
        "run": run.pk,
        "status": run.status,
        "papers": run.papers,
        "matched": run.matched,
        "unknown": run.unknown,
        "failed": run.failed,
        "message": run.message,
    }


def _merge_same_person_after(run) -> None:
    """A run that recorded identity conflicts may have seen one person's two records on one
    byline slot: the identity rule merges those (researchers.merge_same_person)."""
    if run.conflicts and settings.MATCH_MERGE_SAME_PERSON:
        send_after_commit("researchers.merge_same_person")


def _retry_unreachable(task, run, total: BatchResult, **kwargs) -> None:
    """Retry the papers of a failed batch with exponential backoff (MATCH_TASK_RETRY_BACKOFF,
    doubling up to MATCH_TASK_RETRY_BACKOFF_MAX, MATCH_TASK_RETRIES times), then fail the task.

    Called directly or inline (the embedded default, the demo) nothing is raised: the run's
    record and the papers' match states say what failed, and the backlog retries them.
    """
    logger.warning("%s: %s", task.name, run.message)
    if task.request.called_directly or task.request.is_eager:
        return
    error = SourcesUnreachable(
        f"matching run {run.pk}: {run.failed} papers not matched, retried by the backlog: "
        f"{run.message}"
    )
    raise task.retry(
        exc=error,
        countdown=sources_retry_countdown(task.request.retries),
        max_retries=settings.MATCH_TASK_RETRIES,
        kwargs={**kwargs, "paper_ids": sorted(set(total.failed_ids))},
    )


@shared_task(bind=True, name="researchers.match_papers")
def match_papers(self, paper_ids: list[int], requested_at: str | None = None) -> dict:
    """Match these papers (the harvester enqueues new and changed papers by this name).

    Idempotent. Papers another worker holds, or (with `requested_at`, an ISO time) tried since
    then, are left to it. A service that cannot answer leaves the papers as they were (their
    match state says why); the task retries them with backoff, then fails.
    """
    run, total = match_run(
        [int(pk) for pk in paper_ids],
        trigger="task:match_papers",
        requested_at=datetime.fromisoformat(requested_at) if requested_at else None,
    )
    _merge_same_person_after(run)
    if run.failed:
        # The retry asks for the failed papers again, whenever they were last tried.
        _retry_unreachable(self, run, total)
    return _summary(run)


@shared_task(bind=True, name="researchers.match_next_batch")
def match_next_batch(
    self,
    limit: int | None = None,
    paper_ids: list[int] | None = None,
    chain: str | None = None,
) -> dict:
    """Match the next papers of the backlog (`researchers.matching.backlog`), or, when a retry
    of a batch a service could not answer, those `paper_ids`: retried with backoff, then
    failed.

    Under a worker, a batch that matched something keeps the backlog moving without waiting
    for beat: it queues its chain's next batch (`chain`, a slot's token) and starts chains in
    the free slots, up to MATCH_PARALLEL_BATCHES at a time (`researchers.matching.chains`).
    """
    inline = bool(self.request.called_directly or self.request.is_eager)
    holds_slot = chain_slot_renew(chain) if chain else False
    run, total = match_run(
        [int(pk) for pk in paper_ids] if paper_ids else None,
        trigger="task:next_batch",
        limit=limit or settings.MATCH_BATCH_SIZE,
    )
    _merge_same_person_after(run)
    summary = _summary(run)
    if run.failed or not run.papers or inline:
        if holds_slot and chain:
            chain_slot_release(chain)
        if run.failed:
            _retry_unreachable(self, run, total, limit=limit)
        return summary
    followers = [chain] if holds_slot else []
    followers.extend(chain_slots_take())
    for token in followers:
        send_now("researchers.match_next_batch", kwargs={"limit": limit, "chain": token})
    summary["chains_continued"] = len(followers)
    return summary


@shared_task(bind=True, name="researchers.refresh_figures")
def refresh_figures(self, limit: int = 1000) -> dict:
    """Refresh researcher figures that are missing or stale, oldest first. A service that cannot
    answer changes nothing; the task is retried with backoff, then fails (as matching's)."""
    ids = researchers_with_stale_figures(limit=limit)
    try:
        updated = researchers_refresh_figures(ids)
    except ServiceError as exc:
        logger.warning("refresh_figures: %s; nothing was changed", exc)
        if self.request.called_directly or self.request.is_eager:
            return {"researchers": len(ids), "updated": 0, "error": str(exc)}
        raise self.retry(
            exc=exc,
            countdown=sources_retry_countdown(self.request.retries),
            max_retries=settings.MATCH_TASK_RETRIES,
        ) from exc
    return {"researchers": len(ids), "updated": updated}


@shared_task(name="researchers.merge_same_person")
def merge_same_person() -> dict:
    """Merge the records the sources' ids prove to be one person (researchers.curation.
    same_person): each merge a CurationEntry with no actor, undone by a split. Idempotent."""
    outcome = same_person_merge()
    return {"merged": len(outcome.merged), "left_to_curators": len(outcome.left)}


@shared_task(name="researchers.export_identity_links")
def export_identity_links() -> dict:
    """Regenerate the open bulk file of identity links (daily, celery beat)."""
    return identity_links_export()


@shared_task(name="researchers.refresh_institutions")
def refresh_institutions(researcher_ids: list[int]) -> int:
    """The institutions on these records' bylines, counted and listed again after a curator's
    merge, split or re-attribution moved bylines between records (queued, so that the curator's
    request does not wait on the institutions' whole lists)."""
    institution_ids = researcher_institution_ids(researcher_ids)
    institutions_refresh(institution_ids)
    return len(institution_ids)
