"""The account as a whole: everything it holds (export), its deletion, the expiry of sign-ups never
confirmed, and the address record a superuser made on the command line lacks."""

from __future__ import annotations

from datetime import timedelta

from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone

from .library.models import RecommendationDismissal, SavedPaper, SearchAlert
from .models import Claim, Follow, InstitutionFollow
from .profiles import profile_get_or_create


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
