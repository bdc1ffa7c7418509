"""The curators' decision on a claim (from the admin): confirmed, the page is verified by the
curators; rejected after it was confirmed, the verification is withdrawn."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from researchers.models import Researcher
from researchers.verification import researcher_unverify, researcher_verify

from ..models import Claim


class ClaimError(ValueError):
    """A decision on a claim that cannot be made as asked; the message is shown to the curator."""


def claim_review_blockers(*, claim: Claim, confirm: bool) -> list[str]:
    """Why the curators cannot confirm this claim now: the record already belongs to someone
    else, or the claimant already owns another record (reject or revoke that claim first).
    Rejecting is always possible. One query."""
    if not confirm:
        return []
    others = Claim.objects.filter(
        Q(researcher_id=claim.researcher_id) & ~Q(user_id=claim.user_id)
        | Q(user_id=claim.user_id) & ~Q(researcher_id=claim.researcher_id),
        status=Claim.Status.CONFIRMED,
    ).select_related("researcher")
    out = []
    for other in others.order_by("pk")[:10]:
        if other.researcher_id == claim.researcher_id:
            out.append(
                f"This record is already verified as user {other.user_id}'s (claim #{other.pk}): "
                "reject that claim first if this one is right."
            )
        else:
            out.append(
                f"This claimant already owns {other.researcher.display_name} "
                f"(#{other.researcher_id}, claim #{other.pk}): one person, one verified record. "
                "Merge the records, or reject one of the claims."
            )
    return out


def claim_review(*, claim: Claim, reviewer: User | None, confirm: bool, note: str = "") -> Claim:
    """The curators' decision on a claim, with the note the claimant reads. Confirming verifies
    the page ("verified by the curators", public history); rejecting a confirmed claim withdraws
    the page's verification. Raises ClaimError (nothing changed) when confirming would give a
    record two owners or a person two records. Idempotent for the same decision."""
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=claim.user_id).first()
        Researcher.objects.select_for_update().filter(pk=claim.researcher_id).first()
        claim = Claim.objects.select_for_update().get(pk=claim.pk)
        blockers = claim_review_blockers(claim=claim, confirm=confirm)
        if blockers:
            raise ClaimError(" ".join(blockers))
        was_confirmed = claim.status == Claim.Status.CONFIRMED
        now = timezone.now()
        claim.status = Claim.Status.CONFIRMED if confirm else Claim.Status.REJECTED
        if confirm and not was_confirmed:
            claim.method = Researcher.VERIFIED_CURATORS
        claim.reviewed_by = reviewer if reviewer is not None and reviewer.is_authenticated else None
        claim.reviewed_at = now
        claim.decision_note = note[:2000]
        claim.save(
            update_fields=["status", "method", "reviewed_by", "reviewed_at", "decision_note"]
        )
        if confirm and not was_confirmed:
            researcher_verify(
                researcher_id=claim.researcher_id, method=Researcher.VERIFIED_CURATORS, at=now
            )
        elif not confirm and was_confirmed:
            researcher_unverify(researcher_id=claim.researcher_id, reason=note)
    return claim
