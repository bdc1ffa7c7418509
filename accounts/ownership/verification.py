"""A page's "verified" state follows its owner's confirmed claim when claims move with a merge or
a split (accounts.researcher_merges); the state itself is written by researchers.verification."""

from __future__ import annotations

from django.utils import timezone

from researchers.models import Researcher
from researchers.verification import researcher_unverify, researcher_verify

from ..models import Claim


def verification_sync(*, researcher_ids: list[int]) -> None:
    """Make each record's "verified" state follow its confirmed claims after claims moved with a
    merge or a split: a record that now holds its owner's confirmed claim is verified (as that
    claim was), one that lost it is no longer. Two queries, and a write only where it changed."""
    confirmed = {
        rid: (method, at)
        for rid, method, at in Claim.objects.filter(
            researcher_id__in=researcher_ids, status=Claim.Status.CONFIRMED
        )
        .order_by("reviewed_at", "pk")
        .values_list("researcher_id", "method", "reviewed_at")
    }
    for rid, verified_by in Researcher.objects.filter(pk__in=researcher_ids).values_list(
        "pk", "verified_by"
    ):
        if rid in confirmed and not verified_by:
            method, at = confirmed[rid]
            researcher_verify(
                researcher_id=rid,
                method=method or Researcher.VERIFIED_CURATORS,
                at=at or timezone.now(),
            )
        elif rid not in confirmed and verified_by:
            researcher_unverify(researcher_id=rid, reason="The records were merged or split again.")
