"""OAI-PMH harvest windows: pages in, papers upserted, a checkpoint after every page.

A HarvestRun is one window (set, metadata prefix, from/until). Each page goes through
`papers.ingest.papers_upsert` and the run's checkpoint (the next resumption token, counts,
page number) is saved in the same transaction, so a crashed or killed run resumes from the
last page whose papers are in the database: nothing twice, nothing skipped.

- Incremental: `from` = the UTC day of the first responseDate of the last successful run for
  the same set and prefix (arXiv datestamps are days, inclusive, so the overlap is re-read and
  counted "unchanged").
- `badResumptionToken` (tokens expire at 00:00 UTC): the window restarts from its checkpoint:
  the newest datestamp saved, when pages have come in datestamp order (the current server sorts
  by modification time), else the window's own `from`. The upsert makes the overlap harmless.
- Deleted headers mark the paper `is_deleted`; the row stays.
- Malformed records are set aside with `papers.ingest.record_rejection`; the run goes on.
- Created or changed papers are handed to matching (Celery task "researchers.match_papers")
  after the page commits, when HARVEST_ENQUEUE_MATCHING is on.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from functools import partial
from itertools import islice

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from .clients.arxiv import ArxivOAIClient
from .ingest import UpsertCounts, papers_upsert, record_rejection
from .models import HarvestRun, Paper
from .oai import METADATA_PREFIXES, BadResumptionToken, ListPage

logger = logging.getLogger(__name__)

MATCH_TASK_NAME = "researchers.match_papers"
MATCH_BATCH = 500
MAX_RESTARTS = 5

PageCallback = Callable[[HarvestRun, ListPage], None]


class HarvestError(Exception):
    pass


class HarvestLocked(HarvestError):
    """Another harvest of the same set holds the lock."""


# ---------------------------------------------------------------------------------------------
# Lock


@dataclass
class HarvestLock:
    key: str
    token: str
    timeout: int

    def renew(self) -> None:
        cache.touch(self.key, self.timeout)


def _lock_key(set_spec: str) -> str:
    return f"harvest-lock:{set_spec or '*'}"


@contextmanager
def harvest_lock(set_spec: str) -> Iterator[HarvestLock]:
    """Hold the set's lock (cache add with expiry; renewed after each page) or raise HarvestLocked.

    The expiry frees the set if the holder dies without releasing it.
    """
    lock = HarvestLock(_lock_key(set_spec), uuid.uuid4().hex, settings.HARVEST_LOCK_TIMEOUT)
    if not cache.add(lock.key, lock.token, timeout=lock.timeout):
        raise HarvestLocked(f"another harvest of set {set_spec or '(all)'!r} is running")
    try:
        yield lock
    finally:
        # Only release our own lock: after an expiry someone else may hold it now.
        if cache.get(lock.key) == lock.token:
            cache.delete(lock.key)


# ---------------------------------------------------------------------------------------------
# Runs


def harvest_last_success(*, set_spec: str, metadata_prefix: str) -> HarvestRun | None:
    """The last successful open-ended run of the set: only a window without `until` has seen
    every change up to its responseDate (a backfill of 2015 run today has not)."""
    return (
        HarvestRun.objects.filter(
            set_spec=set_spec,
            metadata_prefix=metadata_prefix,
            status=HarvestRun.Status.SUCCEEDED,
            until_date__isnull=True,
            response_date__isnull=False,
        )
        .order_by("-response_date", "-pk")
        .first()
    )


def harvest_next_from(*, set_spec: str, metadata_prefix: str) -> date | None:
    """Where the next incremental run starts: the day of the last good run's responseDate."""
    last = harvest_last_success(set_spec=set_spec, metadata_prefix=metadata_prefix)
    return last.response_date.date() if last else None


def harvest_run_create(
    *,
    set_spec: str = "",
    metadata_prefix: str = "arXivRaw",
    from_date: date | None = None,
    until_date: date | None = None,
    endpoint: str | None = None,
) -> HarvestRun:
    if metadata_prefix not in METADATA_PREFIXES:
        raise HarvestError(f"metadata prefix must be one of {', '.join(METADATA_PREFIXES)}")
    if from_date and until_date and from_date > until_date:
        raise HarvestError(f"from {from_date} is after until {until_date}")
    return HarvestRun.objects.create(
        set_spec=set_spec,
        metadata_prefix=metadata_prefix,
        from_date=from_date,
        until_date=until_date,
        endpoint=endpoint or settings.ARXIV_OAI_URL,
    )


def harvest_unfinished(*, set_spec: str, metadata_prefix: str) -> HarvestRun | None:
    """The newest run of this set that never finished (crashed or failed) after the last success.

    Only meaningful under the set's lock: then a run still marked running is a dead one.
    """
    last = harvest_last_success(set_spec=set_spec, metadata_prefix=metadata_prefix)
    runs = HarvestRun.objects.filter(
        set_spec=set_spec,
        metadata_prefix=metadata_prefix,
        until_date__isnull=True,
        status__in=[HarvestRun.Status.RUNNING, HarvestRun.Status.FAILED],
    )
    if last:
        runs = runs.filter(started_at__gt=last.started_at)
    return runs.order_by("-started_at", "-pk").first()


def _restart_from(run: HarvestRun) -> date | None:
    if run.pages and run.checkpoint_datestamp:
        return max(filter(None, (run.checkpoint_datestamp, run.from_date)))
    return run.from_date


def harvest_run_execute(
    run: HarvestRun,
    *,
    client: ArxivOAIClient | None = None,
    on_page: PageCallback | None = None,
    lock: HarvestLock | None = None,
) -> HarvestRun:
    """Harvest the run's window from its checkpoint to the end. Idempotent; resumable.

    While one page is written to the database the next one is already being fetched and
    parsed (one background thread, no database access there): arXiv's 3-second spacing and
    the upsert overlap instead of adding up. Pages are still written strictly in order, each
    with its checkpoint. On an exception the run is marked failed with the error (a kill
    leaves it "running"); the papers of every page before the failure stay.
    """
    own_client = client is None
    client = client or ArxivOAIClient(base_url=run.endpoint)
    if run.status != HarvestRun.Status.RUNNING:
        run.status = HarvestRun.Status.RUNNING
        run.finished_at = None
        run.save(update_fields=["status", "finished_at"])

    def fetch(token: str, restart_from: date | None) -> ListPage:
        if token:
            return client.list_records_page(
                metadata_prefix=run.metadata_prefix, resumption_token=token
            )
        return client.list_records_page(
            metadata_prefix=run.metadata_prefix,
            set_spec=run.set_spec,
            from_date=restart_from,
            until_date=run.until_date,
        )

    prefetch = ThreadPoolExecutor(max_workers=1, thread_name_prefix="oai-prefetch")
    try:
        token = run.resumption_token
        pending = prefetch.submit(fetch, token, _restart_from(run))
        while True:
            try:
                page = pending.result()
            except BadResumptionToken as exc:
                if not token or run.restarts >= MAX_RESTARTS:
                    raise
                run.restarts += 1
                run.resumption_token = token = ""
                _note_error(run, f"{exc}; restarting the window from {_restart_from(run)}")
                run.save(update_fields=["restarts", "resumption_token", "errors"])
                pending = prefetch.submit(fetch, "", _restart_from(run))
                continue
            last = page.token is None or page.token.is_last
            if not last:
                token = page.next_token
                pending = prefetch.submit(fetch, token, None)
            harvest_page_ingest(run, page)
            if lock:
                lock.renew()
            if on_page:
                on_page(run, page)
            if last:
                break
        run.status = HarvestRun.Status.SUCCEEDED
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "finished_at"])
        return run
    except Exception as exc:
        run.status = HarvestRun.Status.FAILED
        run.finished_at = timezone.now()
        _note_error(run, f"{type(exc).__name__}: {exc}")
        run.save(update_fields=["status", "finished_at", "errors"])
        raise
    finally:
        # A prefetch still in flight after a failure is not waited for; its page is dropped.
        prefetch.shutdown(wait=False, cancel_futures=True)
        if own_client:
            client.close()


def _note_error(run: HarvestRun, message: str) -> None:
    run.errors = [
        *run.errors,
        {"at": timezone.now().isoformat(), "page": run.pages + 1, "message": message[:2000]},
    ]


def _fill_known_versions(page: ListPage) -> None:
    """The `arXiv` format lacks the version number (and, on the current server, the v1 date):
    keep what we already know instead of overwriting it with nothing."""
    if page.has_published and page.has_version:
        return
    ids = [r.arxiv_id for r in page.records]
    known = {
        a: (p, v)
        for a, p, v in Paper.objects.filter(arxiv_id__in=ids).values_list(
            "arxiv_id", "published", "version"
        )
    }
    for record in page.records:
        if record.arxiv_id not in known:
            continue
        published, version = known[record.arxiv_id]
        if not page.has_published and record.published is None:
            record.published = published
        if not page.has_version:
            record.version = max(version or 1, record.version)


def harvest_page_ingest(run: HarvestRun, page: ListPage) -> tuple[UpsertCounts, list[int]]:
    """Upsert one page and save the run's checkpoint in the same transaction.

    A bounded number of queries whatever the page size (plus one per rejected record).
    """
    source = f"oai:{run.set_spec or 'all'}"
    with transaction.atomic():
        _fill_known_versions(page)
        counts, changed_ids = papers_upsert(page.records)
        deleted = 0
        if page.deleted:
            # Clearing source_hash makes a later re-emission of the record count as a change.
            deleted = Paper.objects.filter(arxiv_id__in=page.deleted, is_deleted=False).update(
                is_deleted=True, source_hash="", modified_at=timezone.now()
            )
        for rejection in page.rejected:
            record_rejection(
                source=source,
                record_key=rejection.identifier,
                reason=rejection.reason,
                raw=rejection.raw,
            )
        counts.rejected += len(page.rejected)

        ordered_so_far = run.pages == 0 or run.checkpoint_datestamp is not None
        in_order = (
            ordered_so_far
            and page.datestamps_ordered
            and (
                run.checkpoint_datestamp is None
                or page.first_datestamp is None
                or page.first_datestamp >= run.checkpoint_datestamp
            )
        )
        if page.max_datestamp is not None:
            run.checkpoint_datestamp = (
                max(page.max_datestamp, run.checkpoint_datestamp or page.max_datestamp)
                if in_order
                else None
            )
        if run.response_date is None:
            run.response_date = page.response_date
        run.resumption_token = page.next_token
        run.pages += 1
        run.created += counts.created
        run.updated += counts.updated
        run.unchanged += counts.unchanged
        run.rejected += counts.rejected
        run.deleted += deleted
        run.checkpoint_at = timezone.now()
        run.save(
            update_fields=[
                "checkpoint_datestamp",
                "response_date",
                "resumption_token",
                "pages",
                "created",
                "updated",
                "unchanged",
                "rejected",
                "deleted",
                "checkpoint_at",
            ]
        )
        if changed_ids:
            transaction.on_commit(partial(search_index_enqueue, list(changed_ids)))
            transaction.on_commit(partial(matching_enqueue, list(changed_ids)))
    return counts, changed_ids


# ---------------------------------------------------------------------------------------------
# Hand-offs: the search index and matching


def search_index_enqueue(paper_ids: list[int]) -> None:
    """Build the page's search documents in a worker (inline without a broker).

    Never fails the harvest: the periodic papers.index_search_pending sweep catches up.
    """
    from .tasks import index_search

    try:
        index_search.delay(paper_ids)
    except Exception:
        logger.exception("could not index %d harvested papers", len(paper_ids))


def matching_enqueue(paper_ids: list[int]) -> int:
    """Send the papers to the matching task by name; never fails the harvest.

    The consumer lives in another app (researchers/tasks.py); calling it by name keeps this
    app independent of it. Returns how many batches were sent.
    """
    if not paper_ids or not settings.HARVEST_ENQUEUE_MATCHING:
        return 0
    from wovepaper.celery import app

    sent = 0
    iterator = iter(paper_ids)
    while chunk := list(islice(iterator, MATCH_BATCH)):
        try:
            app.signature(MATCH_TASK_NAME, kwargs={"paper_ids": chunk}).apply_async()
            sent += 1
        except Exception:  # an unknown task or a broker hiccup must not undo a harvest
            logger.exception("could not enqueue matching for %d papers", len(chunk))
    return sent


# ---------------------------------------------------------------------------------------------
# Entry points for the command and the Celery tasks


@dataclass
class HarvestSummary:
    status: str
    run_id: int | None = None
    set_spec: str = ""
    pages: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    next_from: str | None = None
    error: str = ""

    @classmethod
    def of(cls, run: HarvestRun, *, error: str = "") -> HarvestSummary:
        return cls(
            status=run.status,
            run_id=run.pk,
            set_spec=run.set_spec,
            pages=run.pages,
            counts={
                "created": run.created,
                "updated": run.updated,
                "unchanged": run.unchanged,
                "rejected": run.rejected,
                "deleted": run.deleted,
            },
            next_from=run.response_date.date().isoformat() if run.response_date else None,
            error=error,
        )

    def as_dict(self) -> dict:
        return {
            "status": self.status,
            "run_id": self.run_id,
            "set_spec": self.set_spec,
            "pages": self.pages,
            "counts": self.counts,
            "next_from": self.next_from,
            "error": self.error,
        }


def harvest_window(
    *,
    set_spec: str = "",
    metadata_prefix: str | None = None,
    from_date: date | None = None,
    until_date: date | None = None,
    endpoint: str | None = None,
    resume_run_id: int | None = None,
    incremental: bool = False,
    client: ArxivOAIClient | None = None,
    on_page: PageCallback | None = None,
    on_start: Callable[[HarvestRun], None] | None = None,
) -> HarvestRun:
    """Take the set's lock, pick the run (resume one, continue an unfinished incremental one,
    or start a new window) and execute it. Raises HarvestLocked without touching anything.

    incremental=True: continue the set's unfinished run if there is one, else start from the
    last successful run's date (a full harvest if there is none).
    """
    metadata_prefix = metadata_prefix or settings.HARVEST_METADATA_PREFIX
    if resume_run_id is not None:
        run = HarvestRun.objects.get(pk=resume_run_id)
        if run.status == HarvestRun.Status.SUCCEEDED:
            raise HarvestError(f"harvest run {run.pk} already succeeded; nothing to resume")
        set_spec = run.set_spec
    with harvest_lock(set_spec) as lock:
        if resume_run_id is None:
            run = None
            if incremental:
                run = harvest_unfinished(set_spec=set_spec, metadata_prefix=metadata_prefix)
                if run is None:
                    from_date = harvest_next_from(
                        set_spec=set_spec, metadata_prefix=metadata_prefix
                    )
            if run is None:
                run = harvest_run_create(
                    set_spec=set_spec,
                    metadata_prefix=metadata_prefix,
                    from_date=from_date,
                    until_date=until_date,
                    endpoint=endpoint,
                )
        if endpoint and run.endpoint != endpoint:
            run.endpoint = endpoint
            run.save(update_fields=["endpoint"])
        if on_start:
            on_start(run)
        return harvest_run_execute(run, client=client, on_page=on_page, lock=lock)
