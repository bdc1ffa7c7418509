"""OAI-PMH harvest windows: pages in, papers upserted, a checkpoint after every page.

A HarvestRun is one window (set, metadata prefix, from/until). Each page goes through
`papers.ingest.upsert.papers_upsert` and the run's checkpoint (the next resumption token, counts,
page number) is saved in the same transaction, so a crashed or killed run resumes from the
last page whose papers are in the database: nothing twice, nothing skipped.

- Incremental: `from` = the UTC day of the first responseDate of the last successful run for
  the same set and prefix (arXiv datestamps are days, inclusive, so the overlap is re-read and
  counted "unchanged").
- `badResumptionToken` (tokens expire at 00:00 UTC): the window restarts from its checkpoint:
  the newest datestamp saved, when pages have come in datestamp order (the current server sorts
  by modification time), else the window's own `from`. The upsert makes the overlap harmless.
- Deleted headers mark the paper `is_deleted`; the row stays.
- Malformed records are set aside with `papers.ingest.upsert.record_rejection`; the run goes on.
- A page that cannot continue its list (no resumption token in the answer to one, a list
  ending short of the size it announced) is asked for again, then fails the run, resumable.
- Created or changed papers are handed on after the page commits (papers.harvest.handoff): to the
  search index, and to matching when HARVEST_ENQUEUE_MATCHING is on.
- One harvest per set at a time (papers.harvest.lock: a lock held by a heartbeat). A run given
  a deadline stops at the first page boundary past it, still "running", for a Celery task to
  hand the rest to its continuation (papers.tasks).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import date

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from wovepaper.lib.http import ServiceError

from ..ingest.upsert import UpsertCounts, papers_upsert, record_rejection
from ..models import HarvestRun, Paper
from .client import ArxivOAIClient
from .handoff import HandOff
from .lock import HarvestLock, HarvestLocked, HarvestLockLost, Heartbeat, harvest_lock
from .oai import METADATA_PREFIXES, BadResumptionToken, ListPage, ListSoFar, OAIError

logger = logging.getLogger(__name__)

MAX_RESTARTS = 5

PageCallback = Callable[[HarvestRun, ListPage], None]


class HarvestError(Exception):
    pass


def harvest_failure_message(run_id: int | None, exc: BaseException) -> str:
    """What an operator reads when a harvest fails, whatever failed: the reason, and the run
    to resume (a run keeps every page before the failure)."""
    where = f" (run {run_id}: resume with --resume {run_id})" if run_id else ""
    known = isinstance(exc, HarvestError | HarvestLocked | OAIError | ServiceError)
    reason = str(exc) if known and str(exc) else f"{type(exc).__name__}: {exc}".rstrip(": ")
    return f"harvest failed{where}: {reason}"


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
    # A run that succeeded has its responseDate; one without (written by hand) starts afresh.
    return last.response_date.date() if last and last.response_date else None


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


# One loop holds the prefetch's state (the pending page, the list so far, a window restart,
# the deadline): split into functions, that state would be passed around and out again.
def harvest_run_execute(  # noqa: C901
    run: HarvestRun,
    *,
    client: ArxivOAIClient | None = None,
    on_page: PageCallback | None = None,
    lock: HarvestLock | None = None,
    handoff: HandOff | None = None,
    deadline: float | None = None,
) -> HarvestRun:
    """Harvest the run's window from its checkpoint to the end. Idempotent; resumable.

    While one page is written to the database the next one is already being fetched and
    parsed (one background thread, no database access there): arXiv's 3-second spacing and
    the upsert overlap instead of adding up. Pages are still written strictly in order, each
    with its checkpoint. On an exception the run is marked failed with the error (a kill
    leaves it "running"); the papers of every page before the failure stay.

    With `lock`, a heartbeat keeps it (and the run's `heartbeat_at`) fresh while the run
    lives. With `deadline` (a time.monotonic() value), the run stops at the first page
    boundary past it and is returned still "running", its checkpoint saved, for the caller to
    continue.
    """
    own_client = client is None
    client = client or ArxivOAIClient(base_url=run.endpoint)
    handoff = handoff or HandOff()
    run.status = HarvestRun.Status.RUNNING
    run.finished_at = None
    run.heartbeat_at = timezone.now()
    run.save(update_fields=["status", "finished_at", "heartbeat_at"])

    def fetch(restart_from: date | None, so_far: ListSoFar | None) -> ListPage:
        if so_far is not None:
            return client.list_records_page(
                metadata_prefix=run.metadata_prefix, resumption_token=so_far.token, so_far=so_far
            )
        return client.list_records_page(
            metadata_prefix=run.metadata_prefix,
            set_spec=run.set_spec,
            from_date=restart_from,
            until_date=run.until_date,
        )

    prefetch = ThreadPoolExecutor(max_workers=1, thread_name_prefix="oai-prefetch")
    broker_note: int | None = None
    try:
        with Heartbeat(lock, run.pk) if lock else nullcontext():
            # After a resume only the token is known of the list so far.
            so_far = ListSoFar(run.resumption_token) if run.resumption_token else None
            pending = prefetch.submit(fetch, _restart_from(run), so_far)
            while True:
                try:
                    page = pending.result()
                except BadResumptionToken as exc:
                    if so_far is None or run.restarts >= MAX_RESTARTS:
                        raise
                    run.restarts += 1
                    run.resumption_token = ""
                    so_far = None
                    _note_error(run, f"{exc}; restarting the window from {_restart_from(run)}")
                    run.save(update_fields=["restarts", "resumption_token", "errors"])
                    pending = prefetch.submit(fetch, _restart_from(run), None)
                    continue
                last = page.token is None or page.token.is_last
                so_far = so_far.after(page) if so_far else ListSoFar.first(page)
                pause = not last and deadline is not None and time.monotonic() >= deadline
                if not last and not pause:
                    pending = prefetch.submit(fetch, None, so_far)
                harvest_page_ingest(run, page, handoff=handoff)
                broker_note = _note_broker(run, handoff, broker_note)
                if on_page:
                    on_page(run, page)
                if lock and lock.lost.is_set():
                    raise HarvestLockLost(
                        f"run {run.pk} lost the lock of its set after page {run.pages}"
                    )
                if pause:
                    return run
                if last:
                    break
        run.status = HarvestRun.Status.SUCCEEDED
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "finished_at"])
        return run
    except HarvestLockLost:
        raise  # another process may be running it now: its status is not ours to set
    except Exception as exc:
        _record_failure(run, exc)
        raise
    finally:
        # A prefetch still in flight after a failure is not waited for; its page is dropped.
        prefetch.shutdown(wait=False, cancel_futures=True)
        if own_client:
            client.close()


def _record_failure(run: HarvestRun, exc: Exception) -> None:
    run.status = HarvestRun.Status.FAILED
    run.finished_at = timezone.now()
    _note_error(run, f"{type(exc).__name__}: {exc}")
    try:
        if not connection.in_atomic_block:
            # A connection the server terminated is dropped here and opened again on save.
            connection.close_if_unusable_or_obsolete()
        run.save(update_fields=["status", "finished_at", "errors"])
    except Exception as save_error:  # the database itself is gone: the run shows as stale
        logger.error("harvest run %s: could not record its failure: %s", run.pk, save_error)


def _note_error(run: HarvestRun, message: str, *, page: int | None = None) -> None:
    at = run.pages + 1 if page is None else page
    run.errors = [
        *run.errors,
        {"at": timezone.now().isoformat(), "page": at, "message": message[:2000]},
    ]


def _note_broker(run: HarvestRun, handoff: HandOff, at: int | None) -> int | None:
    """Keep the hand-off's broker notice in the run's errors: one entry, added at the page
    whose hand-off found the broker away, its counts brought up to date after each page.
    Returns the entry's position."""
    notice = handoff.notice()
    if not notice:
        return at
    if at is None:
        _note_error(run, notice, page=run.pages)
        at = len(run.errors) - 1
    else:
        run.errors[at] = {**run.errors[at], "message": notice[:2000]}
    run.save(update_fields=["errors"])
    return at


def _fill_known_versions(page: ListPage) -> None:
    """The `arXiv` format lacks the version number (and, on the current server, the v1 date):
    keep what we already know instead of overwriting it with nothing."""
    if page.has_published and page.has_version:
        return
    ids = [r.arxiv_id for r in page.records]
    known = {
        a: (p, precision, v)
        for a, p, precision, v in Paper.objects.filter(arxiv_id__in=ids).values_list(
            "arxiv_id", "published", "published_precision", "version"
        )
    }
    for record in page.records:
        if record.arxiv_id not in known:
            continue
        published, precision, version = known[record.arxiv_id]
        # A day a source gave is kept; a month read from the identifier is read again from it.
        if not page.has_published and record.published is None and precision is None:
            record.published = published
        if not page.has_version:
            record.version = max(version or 1, record.version)


def harvest_page_ingest(
    run: HarvestRun, page: ListPage, *, handoff: HandOff | None = None
) -> tuple[UpsertCounts, list[int]]:
    """Upsert one page and save the run's checkpoint in the same transaction; once it commits,
    hand the created and changed papers on (search documents, matching).

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
        run.checkpoint_at = run.heartbeat_at = timezone.now()
        run.save(
            update_fields=[
                "checkpoint_datestamp",
                "response_date",
                "resumption_token",
                *HarvestRun.COUNTS,
                "checkpoint_at",
                "heartbeat_at",
            ]
        )
        if changed_ids:
            handoff = handoff or HandOff()
            ids = list(changed_ids)
            transaction.on_commit(lambda: handoff.page_committed(ids))
    return counts, changed_ids


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
    handoff: HandOff | None = None,
    deadline: float | None = None,
    task_id: str = "",
) -> HarvestRun:
    """Take the set's lock, pick the run (resume one, continue an unfinished incremental one,
    or start a new window) and execute it. Raises HarvestLocked without touching anything.

    incremental=True: continue the set's unfinished run if there is one, else start from the
    last successful run's date (a full harvest if there is none). `task_id` records the Celery
    task that started the run (the first to run it), so that its redelivery finds this run
    (papers.tasks).
    """
    metadata_prefix = metadata_prefix or settings.HARVEST_METADATA_PREFIX
    run: HarvestRun | None = None
    if resume_run_id is not None:
        run = HarvestRun.objects.get(pk=resume_run_id)
        set_spec = run.set_spec
    with harvest_lock(set_spec) as lock:
        if run is not None:  # resuming
            run.refresh_from_db()  # another process may have moved it on before we got the lock
            if run.status == HarvestRun.Status.SUCCEEDED:
                raise HarvestError(f"harvest run {run.pk} already succeeded; nothing to resume")
        else:
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
        changed = []
        if endpoint and run.endpoint != endpoint:
            run.endpoint = endpoint
            changed.append("endpoint")
        # The task that started the run keeps it: a redelivery of that task (Redis hands it out
        # again an hour later) finds its run even after another task resumed it, and does not
        # start the set over. Resuming tasks carry the run's id, so they need no record.
        if task_id and not run.task_id:
            run.task_id = task_id
            changed.append("task_id")
        if changed:
            run.save(update_fields=changed)
        if on_start:
            on_start(run)
        return harvest_run_execute(
            run, client=client, on_page=on_page, lock=lock, handoff=handoff, deadline=deadline
        )
