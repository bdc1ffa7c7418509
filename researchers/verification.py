"""A researcher's page verified as their own (by their ORCID sign-in or by the curators), and that
verification withdrawn. Accounts decides who the owner is (accounts.ownership, from
accounts.Claim) and calls these writes; researchers never read accounts.

Each change writes one CurationEntry: the page's public history (what, when and why; never which
member of staff).
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from wovepaper.lib.pagecache import pages_changed

from .models import CurationEntry, Researcher
from .owner_edits import OwnershipError


@transaction.atomic
def researcher_verify(*, researcher_id: int, method: str, at: datetime) -> CurationEntry:
    """Mark the page as verified as its researcher's own, by `method` (Researcher.VERIFIED_ORCID
    or VERIFIED_CURATORS), with a public history entry. Idempotent for the same method: a
    record verified already by it gets no second entry (the existing one is returned)."""
    if method not in dict(Researcher.VERIFICATIONS):
        raise OwnershipError(f"unknown verification {method!r}")
    record = Researcher.objects.select_for_update().get(pk=researcher_id)
    if record.verified_by == method:
        entry = (
            CurationEntry.objects.filter(action=CurationEntry.VERIFIED, researcher_id=record.pk)
            .order_by("-pk")
            .first()
        )
        if entry is not None:
            return entry
    return _verification_write(record, method, at)


@transaction.atomic
def researcher_unverify(*, researcher_id: int, reason: str) -> CurationEntry | None:
    """The curators withdrew the page's verification (the claim that made it was rejected).
    None when the page was not verified: nothing to withdraw."""
    record = Researcher.objects.select_for_update().get(pk=researcher_id)
    if not record.verified_by:
        return None
    return _verification_write(record, "", None, note=reason[:2000])


def _verification_write(
    record: Researcher, method: str, at: datetime | None, *, note: str = ""
) -> CurationEntry:
    """Set the page's verification (`method` "" withdraws it) with its public history entry."""
    before = {"verified_by": record.verified_by, "researcher": record.pk}
    record.verified_by = method
    record.verified_at = at
    record.save(update_fields=["verified_by", "verified_at", "modified_at"])
    when = {"verified_at": at.isoformat()} if at is not None else {}
    entry = CurationEntry.objects.create(
        action=CurationEntry.VERIFIED,
        researcher=record,
        before=before,
        after={"verified_by": method, **when, "researcher": record.pk},
        note=note,
    )
    entry.researchers.set([record.pk])
    pages_changed("researcher", [record.pk])
    return entry
