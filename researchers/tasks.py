"""Celery tasks for matching: thin wrappers over researchers.matching and researchers.figures."""

from __future__ import annotations

import logging
from datetime import datetime

from celery import shared_task
from django.conf import settings

from wovepaper.lib.http import ServiceError

from .figures import researchers_refresh_figures, researchers_with_stale_figures
from .identity_links import identity_links_export
from .matching import match_run

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


@shared_task(name="researchers.match_papers")
def match_papers(paper_ids: list[int], requested_at: str | None = None) -> dict:
    """Match these papers (the harvester enqueues new and changed papers by this name).

    Idempotent. A service that cannot answer leaves the papers as they were (their match state
    says why) and they are retried by `researchers.match_next_batch`. Papers another worker
    holds, or (with `requested_at`, an ISO time) tried since then, are left to it.
    """
    run, _ = match_run(
        [int(pk) for pk in paper_ids],
        trigger="task:match_papers",
        requested_at=datetime.fromisoformat(requested_at) if requested_at else None,
    )
    if run.failed:
        logger.warning("match_papers: %s", run.message)
    return _summary(run)


@shared_task(name="researchers.match_next_batch")
def match_next_batch(limit: int | None = None) -> dict:
    """Match the next papers of the backlog, newest first, and retries that are due."""
    run, _ = match_run(trigger="task:next_batch", limit=limit or settings.MATCH_BATCH_SIZE)
    if run.failed:
        logger.warning("match_next_batch: %s", run.message)
    return _summary(run)


@shared_task(name="researchers.refresh_figures")
def refresh_figures(limit: int = 1000) -> dict:
    """Refresh researcher figures that are missing or stale, oldest first."""
    ids = researchers_with_stale_figures(limit=limit)
    try:
        updated = researchers_refresh_figures(ids)
    except ServiceError as exc:
        logger.warning("refresh_figures: %s; nothing was changed", exc)
        return {"researchers": len(ids), "updated": 0, "error": str(exc)}
    return {"researchers": len(ids), "updated": updated}


@shared_task(name="researchers.export_identity_links")
def export_identity_links() -> dict:
    """Regenerate the open bulk file of identity links (daily, celery beat)."""
    return identity_links_export()
