"""A reader says "this is me" of a researcher's page: the claim (confirmed at once by an ORCID tie,
else waiting for the curators with its evidence), the limits on making them, the merges a
confirmed ORCID claim proposes, and the reader's claims as their pages list them."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from researchers.models import IdentityConflict, Researcher, ResearcherExternalId
from researchers.verification import researcher_verify
from wovepaper.lib.bounds import made_in_the_last_hour

from ..follows import FollowError, researcher_final
from ..models import Claim
from . import claim_evidence


class ClaimRefused(FollowError):
    """A new claim past the claimant's limits; the message says which and what to do."""


def _claim_limits(user: User) -> None:
    """Refuses a new claim past CLAIMS_MAX_PENDING waiting for the curators, or past
    CLAIMS_PER_HOUR made: a person has one record or a few, and 120 claims sent in 8 s flooded
    the curators' queue and every page's reader state."""
    pending = Claim.objects.filter(user=user, status=Claim.Status.PENDING).count()
    if pending >= settings.CLAIMS_MAX_PENDING:
        raise ClaimRefused(
            f"You have {pending} claims waiting for the curators, the most one account may "
            "have; a new one can be made once they are decided."
        )
    recent = made_in_the_last_hour(Claim.objects.filter(user=user))
    if recent >= settings.CLAIMS_PER_HOUR:
        raise ClaimRefused(
            f"You have made {recent} claims in the last hour, the most we take from one "
            "account; please wait a little before making more."
        )


def researcher_claim(*, user: User, researcher: Researcher, message: str = "") -> Claim:
    """Say "this is me". One claim per user and record (a rerun returns it, with the message
    updated while it waits). A new claim past the claimant's limits raises ClaimRefused.

    When the account signed in with ORCID and a source gives the record that same iD, the claim
    is confirmed at once (method "orcid", nobody reviewed it): the record's ORCID link is marked
    as confirmed by the researcher, the page says "verified by ORCID" with the date, and the
    other records tied to that iD are proposed for merging (`orcid_merge_proposals`). Any other
    claim waits for the curators with its evidence (claim_evidence); so does one that
    would give the record a second owner or the claimant a second record, whatever the ORCID
    tie says. The claimant's and the record's rows are locked, in that order, so two claims
    racing for one record cannot both be confirmed."""
    target = researcher_final(researcher=researcher)
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()
        target = Researcher.objects.select_for_update().get(pk=target.pk)
        # Counted with the claimant's row locked, so claims sent at once count each other.
        if not Claim.objects.filter(user=user, researcher=target).exists():
            _claim_limits(user)
        claim, created = Claim.objects.get_or_create(
            user=user, researcher=target, defaults={"message": message[:2000]}
        )
        if claim.status != Claim.Status.PENDING:
            return claim
        if not created and message:
            claim.message = message[:2000]
        evidence = claim_evidence.claim_evidence(user=user, researcher=target)
        claim.evidence = evidence
        claim.save(update_fields=["message", "evidence"])
        if evidence["orcid_tie"] and not claim_evidence.blocking_conflicts(evidence):
            now = timezone.now()
            ResearcherExternalId.objects.filter(
                pk__in=claim_evidence.orcid_tie(user=user, researcher=target)
            ).update(origin=ResearcherExternalId.CLAIM)
            claim.status = Claim.Status.CONFIRMED
            claim.method = Researcher.VERIFIED_ORCID
            claim.reviewed_at = now
            claim.save(update_fields=["status", "method", "reviewed_at"])
            researcher_verify(researcher_id=target.pk, method=Researcher.VERIFIED_ORCID, at=now)
    return claim


def orcid_merge_proposals(*, researcher: Researcher) -> list[Researcher]:
    """Other live records that the sources tie to this record's ORCID iD, still undecided:
    the merges a confirmed ORCID claim proposes (one query for the iDs, one for the records)."""
    iids = list(
        researcher.external_ids.filter(source=ResearcherExternalId.ORCID).values_list(
            "value", flat=True
        )
    )
    if not iids:
        return []
    variants = {_bare_orcid(v) for v in iids} | set(iids)
    variants |= {f"https://orcid.org/{_bare_orcid(v)}" for v in iids}
    conflicts = IdentityConflict.objects.filter(
        kind=IdentityConflict.ORCID, orcid__in=variants, status=IdentityConflict.OPEN
    )
    ids = set(conflicts.values_list("researcher_id", flat=True)) | set(
        conflicts.exclude(other_researcher=None).values_list("other_researcher_id", flat=True)
    )
    ids.discard(researcher.pk)
    return list(
        Researcher.objects.filter(pk__in=ids, merged_into__isnull=True, is_person=True).order_by(
            "pk"
        )
    )


def _bare_orcid(value: str) -> str:
    return claim_evidence.bare_orcid(value)


def claims_for_user(*, user: User) -> QuerySet[Claim]:
    return Claim.objects.filter(user=user).select_related("researcher").order_by("-created_at")
