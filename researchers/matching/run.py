"""The run flow: one batch end to end (`match_papers`), and a run of batches (`match_run`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from institutions.services import institutions_complete_from_ror
from papers.models import Paper
from papers.search import PAPERS
from wovepaper.lib.http import ServiceError
from wovepaper.lib.leases import new_lease_token
from wovepaper.lib.search.engine_feed import engine_index_enqueue

from ..institution_members import institutions_refresh
from ..models import MatchRun
from ..page_figures import researchers_update_stats
from ..selectors import papers_for_matching, researchers_without_figures
from ..source_figures import researchers_refresh_figures
from .apply import BatchResult, apply_batch
from .backlog import papers_to_match
from .fetch import Clients, Found, fetch_sources, record_failure
from .lease import lease_kept, lease_papers

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[BatchResult], None]


def match_papers(
    paper_ids: Sequence[int],
    *,
    clients: Clients | None = None,
    now: datetime | None = None,
    due_only: bool = False,
    requested_at: datetime | None = None,
) -> BatchResult:
    """Match one batch of papers (at most a few hundred). Idempotent; safe to run concurrently:
    the batch first claims its papers (`claim.lease_papers`, where `due_only` and
    `requested_at` are explained) and matches only those no other worker holds.

    Side effects: Authorship.researcher, new Researcher and ResearcherExternalId rows, Paper
    cited_by_count / semantic_scholar_id / openalex_id, Institution and AuthorshipInstitution
    rows, IdentityConflict evidence, PaperMatchState rows, and the stored page figures of the
    researchers and institutions touched. If a service cannot answer, only PaperMatchState rows
    change (status "failed") and the error is in the result.
    """
    now = now or timezone.now()
    token = new_lease_token()
    papers = lease_papers(
        papers_for_matching(paper_ids),
        now=now,
        due_only=due_only,
        requested_at=requested_at,
        token=token,
    )
    if not papers:
        return BatchResult()
    own_clients = clients is None
    active = clients or Clients.from_settings()
    try:
        with lease_kept(token):
            result, applied = _match_claimed(papers, active, now)
    finally:
        if own_clients:
            active.close()
    if not applied:
        return result
    _after_batch(result, clients=clients)
    # Citation counts may have changed, which the engines sort by.
    engine_index_enqueue(PAPERS, [paper.pk for paper in papers])
    return result


def _match_claimed(papers: list[Paper], active: Clients, now: datetime) -> tuple[BatchResult, bool]:
    """Ask the sources about the claimed papers and write the outcome, which releases them;
    whether the outcome was applied (False: a service could not answer)."""
    try:
        found = fetch_sources(papers, active)
    except ServiceError as exc:
        message = f"{exc}. Nothing was changed; these papers will be tried again."
        logger.warning("matching batch of %d papers: %s", len(papers), message)
        record_failure(
            papers,
            message,
            now,
            s2_failed=exc.service == active.s2.service,
            openalex_failed=exc.service == active.openalex.service,
        )
        failed = BatchResult(
            papers=len(papers),
            failed=len(papers),
            errors=[str(exc)],
            failed_ids=[p.pk for p in papers],
        )
        return failed, False
    return _apply_with_retry(papers, found, now), True


def _apply_with_retry(papers: Sequence[Paper], found: Found, now: datetime) -> BatchResult:
    try:
        with transaction.atomic():
            return apply_batch(papers, found, now)
    except IntegrityError:
        # Another worker created a record for one of these ids at the same moment: the second
        # pass (counting afresh) finds it.
        pass
    with transaction.atomic():
        return apply_batch(papers, found, now)


def _after_batch(result: BatchResult, *, clients: Clients | None) -> None:
    """Figures for new researchers, ROR details for new institutions, then the stored stats.

    A service failing here is logged and left to the scheduled refresh: the matching itself is
    already committed.
    """
    if result.researcher_ids:
        missing = researchers_without_figures(result.researcher_ids)
        if missing:
            try:
                researchers_refresh_figures(missing, clients=clients)
            except ServiceError as exc:
                result.errors.append(f"figures not refreshed: {exc}")
                logger.warning("figures not refreshed: %s", exc)
        researchers_update_stats(result.researcher_ids)
    if result.institution_ids:
        try:
            institutions_complete_from_ror(institution_ids=result.institution_ids)
        except ServiceError as exc:
            result.errors.append(f"institutions not completed from ROR: {exc}")
            logger.warning("ROR completion: %s", exc)
        institutions_refresh(result.institution_ids)


def match_run(
    paper_ids: Sequence[int] | None = None,
    *,
    trigger: str,
    limit: int | None = None,
    since: datetime | None = None,
    batch_size: int | None = None,
    clients: Clients | None = None,
    progress: ProgressCallback | None = None,
    stop_on_failure: bool = True,
    requested_at: datetime | None = None,
) -> tuple[MatchRun, BatchResult]:
    """Match the given papers, or the next `limit` papers to match, batch by batch.

    Each batch matches only the papers it could claim: the backlog's papers if they are still
    due, the given papers if no other worker holds them (and, with `requested_at`, if they were
    not tried since).

    Records a MatchRun with the counts. With `stop_on_failure`, the first batch a service could
    not answer ends the run (the rest would fail the same way and only wait for retries).
    """
    size = batch_size or settings.MATCH_BATCH_SIZE
    run = MatchRun.objects.create(trigger=trigger[:32])
    total = BatchResult()
    own_clients = clients is None
    active = clients or Clients.from_settings()
    try:
        for batch in _batches(paper_ids, size=size, limit=limit, since=since):
            result = match_papers(
                batch,
                clients=active,
                due_only=paper_ids is None,
                requested_at=requested_at,
            )
            total.add(result)
            if progress:
                progress(result)
            if result.failed and stop_on_failure:
                break
    finally:
        if own_clients:
            active.close()
    _finish(run, total)
    return run, total


def _batches(
    paper_ids: Sequence[int] | None, *, size: int, limit: int | None, since: datetime | None
) -> Iterator[list[int]]:
    """The given ids in batches, or else the next papers to match, up to `limit` papers.

    The backlog is read again before each batch, so that it starts after what the last batch
    matched.
    """
    remaining = limit
    explicit = list(paper_ids) if paper_ids is not None else None
    position = 0
    while True:
        count = size if remaining is None else min(size, remaining)
        if count <= 0:
            return
        if explicit is not None:
            batch = explicit[position : position + count]
            position += count
        else:
            batch = papers_to_match(limit=count, since=since)
        if not batch:
            return
        yield batch
        if remaining is not None:
            remaining -= len(batch)


def _finish(run: MatchRun, total: BatchResult) -> None:
    run.finished_at = timezone.now()
    for name in MatchRun.COUNTS:
        setattr(run, name, getattr(total, name))
    if total.failed and not total.matched and not total.unknown:
        run.status = MatchRun.UNREACHABLE
    elif total.failed or total.errors:
        run.status = MatchRun.PARTIAL
    run.message = "\n".join(total.errors)[:5000]
    run.save()
