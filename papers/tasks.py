"""Celery tasks for harvesting: thin wrappers that take primitives and call papers.harvesting."""

from __future__ import annotations

import logging
from datetime import date

from celery import chain, shared_task
from django.conf import settings

from . import harvesting, indexing

logger = logging.getLogger(__name__)


def _date(value: str | None) -> date | None:
    return date.fromisoformat(value) if value else None


@shared_task(name="papers.harvest_window", acks_late=True, ignore_result=False)
def harvest_window(
    set_spec: str = "",
    metadata_prefix: str | None = None,
    from_date: str | None = None,
    until_date: str | None = None,
    endpoint: str | None = None,
    resume_run_id: int | None = None,
    incremental: bool = False,
) -> dict:
    """Harvest one window of one set (dates as ISO strings). Safe to run twice: the upsert is
    idempotent and the set lock makes a second concurrent call return "locked" at once.

    A failed harvest is recorded on its HarvestRun (and resumed by the next incremental run);
    the task returns the summary instead of raising, so a chain of sets goes on.
    """
    started: list[harvesting.HarvestRun] = []
    try:
        run = harvesting.harvest_window(
            set_spec=set_spec,
            metadata_prefix=metadata_prefix,
            from_date=_date(from_date),
            until_date=_date(until_date),
            endpoint=endpoint,
            resume_run_id=resume_run_id,
            incremental=incremental,
            on_start=started.append,
        )
    except harvesting.HarvestLocked as exc:
        logger.info("harvest of %r skipped: %s", set_spec, exc)
        return harvesting.HarvestSummary(
            status="locked", set_spec=set_spec, error=str(exc)
        ).as_dict()
    except Exception as exc:
        logger.exception("harvest of %r failed", set_spec)
        error = f"{type(exc).__name__}: {exc}"
        if not started:
            return harvesting.HarvestSummary(
                status="failed", set_spec=set_spec, error=error
            ).as_dict()
        return harvesting.HarvestSummary.of(started[0], error=error).as_dict()
    return harvesting.HarvestSummary.of(run).as_dict()


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


@shared_task(name="papers.index_search", acks_late=True)
def index_search(paper_ids: list[int]) -> int:
    """Build the search documents of papers a harvest page created or changed."""
    return indexing.search_index_papers(paper_ids)


@shared_task(name="papers.index_search_pending", acks_late=True)
def index_search_pending() -> int:
    """The periodic catch-up: whatever a lost task or an interrupted import left unindexed."""
    return indexing.search_index_pending()
