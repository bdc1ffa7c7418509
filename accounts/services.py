"""Writes for accounts: profiles, onboarding, follows, claims, export and deletion."""

from __future__ import annotations

from datetime import timedelta

from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from institutions.models import Institution
from researchers.models import IdentityConflict, Researcher, ResearcherExternalId
from researchers.selectors import researcher_survivor_id

from .models import Claim, Follow, InstitutionFollow, Profile


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


def researcher_claim(*, user: User, researcher: Researcher, message: str = "") -> Claim:
    """Say "this is me". One claim per user and record; staff review it in the admin, except
    when the account signed in with ORCID and the record carries that same ORCID iD: then the
    claim is confirmed at once (reviewed_by stays empty: no person reviewed it), and the
    other records the sources tie to that iD ("one ORCID across several records" conflicts, which
    the curators' queue lists first) are proposed for merging (`orcid_merge_proposals`)."""
    target = researcher_final(researcher=researcher)
    claim, created = Claim.objects.get_or_create(
        user=user, researcher=target, defaults={"message": message[:2000]}
    )
    if not created and message and claim.status == Claim.Status.PENDING:
        claim.message = message[:2000]
        claim.save(update_fields=["message"])
    if claim.status == Claim.Status.PENDING and researcher_orcid_confirm(
        user=user, researcher=target
    ):
        claim.status = Claim.Status.CONFIRMED
        claim.reviewed_at = timezone.now()
        claim.save(update_fields=["status", "reviewed_at"])
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
    return value.strip().rstrip("/").rsplit("/", 1)[-1].upper()


def researcher_orcid_confirm(*, user: User, researcher: Researcher) -> bool:
    """Whether the user's ORCID sign-in proves this record is theirs. When it does, the record's
    ORCID link is marked as confirmed by the researcher."""
    signed_in = {
        _bare_orcid(uid)
        for uid in SocialAccount.objects.filter(user=user, provider="orcid").values_list(
            "uid", flat=True
        )
    }
    if not signed_in:
        return False
    links = [
        ext
        for ext in researcher.external_ids.filter(source=ResearcherExternalId.ORCID)
        if _bare_orcid(ext.value) in signed_in
    ]
    if not links:
        return False
    ResearcherExternalId.objects.filter(pk__in=[ext.pk for ext in links]).update(
        origin=ResearcherExternalId.CLAIM
    )
    return True


def claim_review(*, claim: Claim, reviewer: User, confirm: bool) -> Claim:
    """Staff decision on a claim."""
    claim.status = Claim.Status.CONFIRMED if confirm else Claim.Status.REJECTED
    claim.reviewed_by = reviewer
    claim.reviewed_at = timezone.now()
    claim.save(update_fields=["status", "reviewed_by", "reviewed_at"])
    return claim


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
    }


@transaction.atomic
def user_delete(*, user: User) -> None:
    """Delete the account. Follows, claims, profile, digests, chat conversations and messages,
    email addresses, social accounts and API tokens go with it (all cascade from the user)."""
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
