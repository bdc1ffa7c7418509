from __future__ import annotations

from celery import shared_task

from .digests import digests_send_due


@shared_task(name="accounts.tasks.send_digests", acks_late=True)
def send_digests() -> dict[str, int]:
    """Beat task: send the digests that are due. Safe to run twice (see accounts.digests)."""
    return digests_send_due()
