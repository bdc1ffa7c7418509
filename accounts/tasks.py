from __future__ import annotations

from celery import shared_task

from .account_data import unverified_accounts_expire
from .digests import digests_send_due
from .library import import_jobs
from .library.alerts import saved_search_check, saved_searches_check_due
from .library.models import SavedSearch


@shared_task(name="accounts.tasks.send_digests", acks_late=True)
def send_digests() -> dict[str, int]:
    """Beat task: send the digests that are due. Safe to run twice (see accounts.digests)."""
    return digests_send_due()


@shared_task(name="accounts.tasks.expire_unverified_accounts", acks_late=True)
def expire_unverified_accounts() -> int:
    """Beat task: remove accounts never confirmed nor used. Idempotent."""
    return unverified_accounts_expire()


@shared_task(name="accounts.tasks.check_saved_searches", acks_late=True)
def check_saved_searches() -> int:
    """Beat task: run every saved search over the papers new since its last check and keep what
    it finds as alerts. Safe to run twice (a paper is announced once per search)."""
    return saved_searches_check_due()


@shared_task(name="accounts.library_import_run", acks_late=True)
def library_import_run(job_id: int) -> str:
    """Read an imported file into its list (the job's page follows it). Safe to run twice."""
    return import_jobs.library_import_run(job_id)


@shared_task(name="accounts.tasks.check_saved_search", acks_late=True)
def check_saved_search(search_id: int) -> int:
    """Check one saved search now (queued when it is saved, so it shows what it finds at once).
    Idempotent; a search deleted since is nothing to check."""
    saved = SavedSearch.objects.filter(pk=search_id, user__is_active=True).first()
    return saved_search_check(saved=saved) if saved is not None else 0
