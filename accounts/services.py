"""Writes for accounts: profiles, onboarding, follows, claims, the account's export and deletion
(the library's writes are in accounts.library)."""

from __future__ import annotations

from datetime import timedelta

from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Prefetch, Q
from django.utils import timezone

from institutions.models import Institution
from researchers.models import IdentityConflict, Researcher, ResearcherExternalId
from researchers.selectors import researcher_survivor_id
from researchers.verification import researcher_unverify, researcher_verify
from wovepaper.lib.bounds import made_in_the_last_hour

from . import claim_evidence
from .library.models import RecommendationDismissal, SavedPaper, SearchAlert
from .models import (
    Claim,
    Follow,
    InstitutionFollow,
    Profile,
)


class FollowError(ValueError):
    """A follow that cannot be made; the message is shown to the user."""


def profile_get_or_create(*, user: User) -> Profile:
    """The user's profile. Users made outside sign-up (e.g. createsuperuser) get one on first use,
    marked as onboarded, because nobody asked them to onboard."""
    profile, _ = Profile.objects.get_or_create(
        user=user, defaults={"onboarding": Profile.Onboarding.COMPLETED}
    )
    return profile


def profile_create_for_signup(*, user: User) -> Profile:
    """A new user's profile, with onboarding pending. Idempotent."""
    profile, _ = Profile.objects.get_or_create(user=user)
    return profile


def profile_set_fields(*, profile: Profile, fields: list[str]) -> Profile:
    # Order kept as chosen, duplicates dropped.
    profile.fields = list(dict.fromkeys(fields))
    profile.save(update_fields=["fields", "modified_at"])
    return profile


def profile_set_digest(*, profile: Profile, frequency: str) -> Profile:
    if frequency not in Profile.Digest.values:
        raise ValueError(f"unknown digest frequency {frequency!r}")
    profile.digest_frequency = frequency
    profile.save(update_fields=["digest_frequency", "modified_at"])
    return profile


def onboarding_advance(*, profile: Profile, step: str) -> Profile:
    """Remember the step to resume at."""
    profile.onboarding_step = step
    profile.save(update_fields=["onboarding_step", "modified_at"])
    return profile


def onboarding_skip(*, profile: Profile) -> Profile:
    """Stop sending the user to onboarding; the step is kept so they can come back to it."""
    if profile.onboarding != Profile.Onboarding.COMPLETED:
        profile.onboarding = Profile.Onboarding.SKIPPED
        profile.save(update_fields=["onboarding", "modified_at"])
    return profile


def onboarding_resume(*, profile: Profile) -> Profile:
    """A user who skipped comes back: onboarding is pending again at the step they left."""
    if profile.onboarding == Profile.Onboarding.SKIPPED:
        profile.onboarding = Profile.Onboarding.PENDING
        profile.save(update_fields=["onboarding", "modified_at"])
    return profile


def onboarding_complete(*, profile: Profile) -> Profile:
    profile.onboarding = Profile.Onboarding.COMPLETED
    profile.onboarding_step = Profile.Step.FIELDS
    profile.save(update_fields=["onboarding", "onboarding_step", "modified_at"])
    return profile


def researcher_final(*, researcher: Researcher) -> Researcher:
    """The record a merged researcher ended up in (itself when not merged)."""
    if not researcher.merged_into_id:
        return researcher
    survivor_id = researcher_survivor_id(researcher.merged_into_id)
    if survivor_id is None:
        raise FollowError("This researcher record is part of a merge loop or too long a chain.")
    return Researcher.objects.get(pk=survivor_id)


def researcher_follow(*, user: User, researcher: Researcher) -> Follow:
    """Follow a researcher; a merged record is followed through its surviving one.

    Idempotent: following twice returns the existing follow (the unique constraint decides, so
    two concurrent requests cannot make two rows)."""
    target = researcher_final(researcher=researcher)
    try:
        with transaction.atomic():
            follow, _ = Follow.objects.get_or_create(user=user, researcher=target)
    except IntegrityError:
        follow = Follow.objects.get(user=user, researcher=target)
    return follow


def researcher_unfollow(*, user: User, researcher: Researcher) -> int:
    """Stop following a researcher (and the record it was merged into). Returns rows removed;
    0 when the user did not follow it, which is not an error."""
    ids = {researcher.pk}
    try:
        ids.add(researcher_final(researcher=researcher).pk)
    except FollowError:
        pass
    deleted, _ = Follow.objects.filter(user=user, researcher_id__in=ids).delete()
    return deleted


def institution_follow(*, user: User, institution: Institution) -> InstitutionFollow:
    """Follow an institution. Idempotent, as researcher_follow."""
    try:
        with transaction.atomic():
            follow, _ = InstitutionFollow.objects.get_or_create(user=user, institution=institution)
    except IntegrityError:
        follow = InstitutionFollow.objects.get(user=user, institution=institution)
    return follow


def institution_unfollow(*, user: User, institution: Institution) -> int:
    """Stop following an institution. Returns rows removed (0 when it was not followed)."""
    deleted, _ = InstitutionFollow.objects.filter(user=user, institution=institution).delete()
    return deleted


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
    claim waits for the curators with its evidence (accounts.claim_evidence); so does one that
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


# --- the account's data --------------------------------------------------------------------------


def user_export(*, user: User) -> dict:
    """Everything wovepaper stores about the user, as JSON-ready data."""
    profile = profile_get_or_create(user=user)
    return {
        "exported_at": timezone.now().isoformat(),
        "user": {
            "id": user.pk,
            "email": user.email,
            "date_joined": user.date_joined.isoformat(),
            "last_login": user.last_login.isoformat() if user.last_login else None,
        },
        "email_addresses": [
            {"email": e.email, "verified": e.verified, "primary": e.primary}
            for e in EmailAddress.objects.filter(user=user).order_by("-primary", "email")
        ],
        "connected_accounts": [
            {
                "provider": a.provider,
                "uid": a.uid,
                "date_joined": a.date_joined.isoformat() if a.date_joined else None,
            }
            for a in SocialAccount.objects.filter(user=user).order_by("provider")
        ],
        "profile": {
            "fields_of_interest": profile.fields,
            "digest_frequency": profile.digest_frequency,
            "last_digest_at": (
                profile.last_digest_at.isoformat() if profile.last_digest_at else None
            ),
            "onboarding": profile.onboarding,
        },
        "follows": [
            {
                "researcher_id": f.researcher_id,
                "name": f.researcher.display_name,
                "url": f.researcher.get_absolute_url(),
                "since": f.created_at.isoformat(),
            }
            for f in Follow.objects.filter(user=user)
            .select_related("researcher")
            .order_by("created_at")
            .iterator(chunk_size=1000)
        ],
        "institution_follows": [
            {
                "institution_id": f.institution_id,
                "name": f.institution.name,
                "url": f.institution.get_absolute_url(),
                "since": f.created_at.isoformat(),
            }
            for f in InstitutionFollow.objects.filter(user=user)
            .select_related("institution")
            .order_by("created_at")
        ],
        "claims": [
            {
                "researcher_id": c.researcher_id,
                "name": c.researcher.display_name,
                "status": c.status,
                "message": c.message,
                "decided_at": c.reviewed_at.isoformat() if c.reviewed_at else None,
                "decision_note": c.decision_note,
                "created_at": c.created_at.isoformat(),
            }
            for c in Claim.objects.filter(user=user)
            .select_related("researcher")
            .order_by("created_at")
        ],
        "reports": [
            {
                "kind": r.kind,
                "researcher_id": r.researcher_id,
                "other_researcher_id": r.other_researcher_id,
                "authorship_id": r.authorship_id,
                "note": r.note,
                "status": r.status,
                "outcome": r.outcome,
                "created_at": r.created_at.isoformat(),
                "closed_at": r.closed_at.isoformat() if r.closed_at else None,
            }
            for r in user.match_reports.order_by("created_at", "pk")
        ],
        "sent_digests": [
            {"period": d.period_key, "papers": d.paper_count, "sent_at": d.sent_at.isoformat()}
            for d in user.sent_digests.order_by("sent_at")
        ],
        "conversations": [
            {
                "id": c.pk,
                "title": c.title,
                "scope": c.scope,
                "created_at": c.created_at.isoformat(),
                "updated_at": c.updated_at.isoformat(),
                "messages": [
                    {
                        "role": m.role,
                        "content": m.content,
                        "mode": m.mode,
                        "citations": m.citations,
                        "model": m.model,
                        "prompt_tokens": m.prompt_tokens,
                        "completion_tokens": m.completion_tokens,
                        "created_at": m.created_at.isoformat(),
                    }
                    for m in c.messages.all()
                ],
            }
            for c in user.conversations.order_by("created_at", "pk").prefetch_related("messages")
        ],
        "saved_searches": [
            {
                "query": saved.query,
                "mode": saved.mode,
                "category": saved.category,
                "date_from": saved.date_from.isoformat() if saved.date_from else None,
                "date_to": saved.date_to.isoformat() if saved.date_to else None,
                "created_at": saved.created_at.isoformat(),
                "alerts": [
                    {"arxiv_id": alert.paper.arxiv_id, "found_at": alert.found_at.isoformat()}
                    for alert in saved.alerts.all()
                ],
            }
            for saved in user.saved_searches.order_by("created_at", "pk").prefetch_related(
                Prefetch(
                    "alerts",
                    queryset=SearchAlert.objects.select_related("paper")
                    .only("saved_search_id", "found_at", "paper__arxiv_id")
                    .order_by("found_at", "pk"),
                )
            )
        ],
        "library": [
            {
                "name": reading_list.name,
                "created_at": reading_list.created_at.isoformat(),
                "shared": reading_list.is_shared,
                "papers": [
                    {
                        "arxiv_id": saved.paper.arxiv_id,
                        "title": saved.paper.title,
                        "saved_at": saved.created_at.isoformat(),
                        "note": saved.note,
                    }
                    for saved in reading_list.saved.all()
                ],
            }
            for reading_list in user.reading_lists.order_by("created_at", "pk").prefetch_related(
                Prefetch(
                    "saved",
                    queryset=SavedPaper.objects.select_related("paper")
                    .only(
                        "reading_list_id", "created_at", "note", "paper__arxiv_id", "paper__title"
                    )
                    .order_by("created_at", "pk"),
                )
            )
        ],
        "not_relevant": [
            {"arxiv_id": arxiv_id, "at": at.isoformat()}
            for arxiv_id, at in RecommendationDismissal.objects.filter(user=user)
            .order_by("created_at", "pk")
            .values_list("paper__arxiv_id", "created_at")
        ],
    }


@transaction.atomic
def user_delete(*, user: User) -> None:
    """Delete the account. Follows, claims, profile, digests, chat conversations and messages,
    the library (lists, saved papers, notes, shared links), saved searches and their alerts,
    the papers marked not relevant, email addresses, social accounts
    and API tokens go with it (all cascade from the user)."""
    user.delete()


def unverified_accounts_expire(*, now=None) -> int:
    """Delete the accounts made more than ACCOUNT_UNVERIFIED_EXPIRE_DAYS ago whose address was
    never confirmed and that never signed in (no staff, no social sign-in): what a sign-up with
    someone else's address leaves. Returns how many went; a rerun removes nothing more."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.ACCOUNT_UNVERIFIED_EXPIRE_DAYS)
    expired = (
        User.objects.filter(
            date_joined__lt=cutoff, last_login__isnull=True, is_staff=False, is_superuser=False
        )
        .exclude(pk__in=EmailAddress.objects.filter(verified=True).values("user_id"))
        .exclude(pk__in=SocialAccount.objects.values("user_id"))
    )
    count = 0
    for user in expired.iterator(chunk_size=500):
        user_delete(user=user)
        count += 1
    return count


def superuser_address_confirm(*, user: User) -> bool:
    """A superuser made by `manage.py createsuperuser` has its address but no allauth record of
    it: record it as confirmed (whoever ran the command holds the server, which is proof
    enough). Only for an account with no address record at all; idempotent. True when made."""
    if not user.email or EmailAddress.objects.filter(user=user).exists():
        return False
    EmailAddress.objects.create(user=user, email=user.email, primary=True, verified=True)
    return True
