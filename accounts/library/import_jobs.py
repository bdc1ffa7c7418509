"""An import as a job a worker runs and a page follows: the request stores the file and queues
it (accounts.library_import_run), the worker reads, matches and saves it (importing), and the
job's page shows it queued, running, then its report. Where the workers cannot be reached, the
request runs it itself: an import is bounded (importing's size, block, entry, search and time
budgets), so doing so costs the reader seconds, never the file."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from wovepaper.lib.queueing import send_now

from . import importing
from .models import LibraryImport, ReadingList

logger = logging.getLogger(__name__)

# Matched and unmatched references a job's report keeps for its page (an import reads at most
# IMPORT_MAX_ENTRIES: all of them).
REPORT_ENTRIES = importing.IMPORT_MAX_ENTRIES


def library_import_start(
    *, user: User, reading_list: ReadingList, text: str, filename: str = ""
) -> LibraryImport:
    """Keep the file as a queued job and hand it to the workers; run it here when they cannot
    be reached. Returns the job, whose page follows it."""
    if reading_list.user_id != user.pk:
        raise importing.LibraryError("That list is not yours.")
    job = LibraryImport.objects.create(
        user=user, reading_list=reading_list, filename=filename[:255], text=text
    )
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # No broker (the embedded default): no worker will come for it, so it runs here, and
        # never through Celery's inline run, whose failure would leave the job queued.
        library_import_run(job.pk)
    elif failure := send_now("accounts.library_import_run", job.pk, quiet=True):
        logger.warning("import %s read in the request: %s", job.pk, failure)
        library_import_run(job.pk)
    job.refresh_from_db()
    return job


def library_import_run(job_id: int) -> str:
    """Read a queued job's file into its list and keep the report (a job already taken is left
    alone, so a message delivered twice reads the file once). Returns the job's status."""
    with transaction.atomic():
        job = LibraryImport.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status != LibraryImport.QUEUED:
            return job.status if job else "missing"
        job.status, job.started_at = LibraryImport.RUNNING, timezone.now()
        job.save(update_fields=["status", "started_at"])
    try:
        report = importing.library_import(
            user=job.user, reading_list=job.reading_list, text=job.text, filename=job.filename
        )
    except Exception:
        logger.exception("import %s failed", job.pk)
        job.status = LibraryImport.FAILED
        job.report = {"error": "The file could not be imported: an error on our side."}
    else:
        job.status = LibraryImport.FAILED if report.error else LibraryImport.DONE
        job.report = import_report_data(report)
    job.text, job.finished_at = "", timezone.now()
    job.save(update_fields=["status", "report", "text", "finished_at"])
    return job.status


def import_report_data(report: importing.ImportReport) -> dict:
    """The report as the job keeps it: what its page shows, in JSON."""
    return {
        "error": report.error,
        "added": report.added,
        "references_read": report.references_read,
        "entries_skipped": report.entries_skipped,
        "titles_not_searched": report.titles_not_searched,
        "unreadable": report.unreadable,
        "unreadable_count": report.unreadable_count,
        "matched": [
            {
                "reference": reference.title or reference.key,
                "arxiv_id": paper.arxiv_id,
                "title": paper.title,
                "url": paper.get_absolute_url(),
                "how": how,
            }
            for reference, paper, how in report.matched[:REPORT_ENTRIES]
        ],
        "unmatched": [
            {
                "reference": reference.title or reference.key,
                "arxiv_id": reference.arxiv_id,
                "doi": reference.doi,
            }
            for reference in report.unmatched[:REPORT_ENTRIES]
        ],
    }


def library_import_job(*, user: User, reading_list_id: int, job_id: int) -> LibraryImport | None:
    """The reader's own job on that list, or None."""
    return (
        LibraryImport.objects.select_related("reading_list")
        .filter(pk=job_id, user=user, reading_list_id=reading_list_id)
        .defer("text")
        .first()
    )
