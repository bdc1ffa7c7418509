"""Digest emails: new papers by followed researchers and institutions, new papers citing the
followed researchers, and the new papers the reader's saved searches found (grouped by
search), once per period, never twice.

A digest is recorded as a SentDigest row (unique per user and period) in the same transaction
that sends it: a retry, a second worker or a rerun of the beat task finds the row and sends
nothing, and a failed send rolls the row back so the next run tries again."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from papers.citations.lists import citations_of_researchers
from papers.selectors import papers_with_short_bylines

from .feed import digest_papers, paper_changes_for_user
from .follows import followed_institution_ids, followed_researcher_ids
from .library.alerts import AlertGroup, alerts_for_user, alerts_grouped
from .library.recommendations import library_recommendations
from .models import Profile, SentDigest

logger = logging.getLogger(__name__)

# "Papers like your library" in a digest.
DIGEST_RECOMMENDATIONS = 5
UNSUBSCRIBE_SALT = "accounts.digest.unsubscribe"
PERIODS: dict[str, timedelta] = {
    Profile.Digest.DAILY: timedelta(days=1),
    Profile.Digest.WEEKLY: timedelta(days=7),
}


def period_key(frequency: str, now: datetime) -> str:
    """The period a digest belongs to: one per UTC day, or one per ISO week."""
    day = now.astimezone(UTC).date() if timezone.is_aware(now) else now.date()
    if frequency == Profile.Digest.DAILY:
        return f"daily:{day.isoformat()}"
    year, week, _ = day.isocalendar()
    return f"weekly:{year}-W{week:02d}"


def unsubscribe_token(*, user_id: int) -> str:
    return signing.TimestampSigner(salt=UNSUBSCRIBE_SALT).sign(str(user_id))


def unsubscribe_url(*, user_id: int) -> str:
    token = unsubscribe_token(user_id=user_id)
    path = reverse("accounts:digest_unsubscribe", kwargs={"token": token})
    return f"{settings.SITE_URL}{path}"


@dataclass(frozen=True)
class UnsubscribeResult:
    ok: bool
    reason: str = ""  # "expired" or "invalid" when not ok
    user_id: int | None = None


def unsubscribe_token_check(*, token: str) -> UnsubscribeResult:
    """Whether `token` is a valid, unexpired unsubscribe link, and whose. Changes nothing."""
    signer = signing.TimestampSigner(salt=UNSUBSCRIBE_SALT)
    try:
        user_id = int(signer.unsign(token, max_age=settings.DIGEST_UNSUBSCRIBE_MAX_AGE))
    except signing.SignatureExpired:
        return UnsubscribeResult(False, "expired")
    except (signing.BadSignature, ValueError):
        return UnsubscribeResult(False, "invalid")
    return UnsubscribeResult(True, user_id=user_id)


def digest_unsubscribe(*, token: str) -> UnsubscribeResult:
    """Turn digests off for the user the token names. Idempotent; needs no session."""
    result = unsubscribe_token_check(token=token)
    if result.user_id is not None:
        # A deleted account's token unsubscribes nothing, and says so like a bad link would
        # not: the address gets no more mail either way.
        Profile.objects.filter(user_id=result.user_id).update(
            digest_frequency=Profile.Digest.NONE, modified_at=timezone.now()
        )
    return result


@dataclass(frozen=True)
class DigestOutcome:
    status: str  # "sent", "already-sent", "nothing-new", "off"
    paper_count: int = 0
    period_key: str = ""


@dataclass
class DigestParts:
    """What one reader's digest holds, read but not sent."""

    since: datetime
    papers: list
    total: int
    citations: list
    found: list
    alert_groups: list[AlertGroup]
    changes: list
    followed: str

    @property
    def empty(self) -> bool:
        return not (self.papers or self.citations or self.alert_groups or self.changes)


def _digest_parts(*, user, since: datetime, now: datetime) -> DigestParts:
    researcher_ids = followed_researcher_ids(user=user)
    institution_ids = followed_institution_ids(user=user)
    limit = settings.DIGEST_MAX_PAPERS
    papers: list = []
    citations: list = []
    total = 0
    if researcher_ids or institution_ids:
        papers_qs = digest_papers(
            researcher_ids=researcher_ids, since=since, now=now, institution_ids=institution_ids
        )
        papers = papers_with_short_bylines(papers_qs[: limit + 1], focus_ids=researcher_ids)
        # New papers citing the followed researchers' papers, each naming the paper it cites.
        citations = citations_of_researchers(researcher_ids, since=since, limit=limit)
        total = len(papers) if len(papers) <= limit else papers_qs.count()
        papers = papers[:limit]
    # The saved searches' alerts since the last digest: one range of the reader's alerts,
    # however many searches they saved (accounts.library.alerts).
    found = alerts_for_user(user=user, since=since, limit=limit)
    papers_with_short_bylines([alert.paper for alert in found])
    changes = paper_changes_for_user(
        user=user, researcher_ids=researcher_ids, since=since, limit=limit
    )
    return DigestParts(
        since=since,
        papers=papers,
        total=total,
        citations=citations,
        found=found,
        alert_groups=alerts_grouped(found),
        changes=changes,
        followed="researchers and institutions you follow"
        if institution_ids
        else "researchers you follow",
    )


def _digest_message(*, user, frequency: str, parts: DigestParts) -> EmailMultiAlternatives:
    # Papers like the library ride along with a digest that goes out; alone they send none.
    liked = library_recommendations(user=user, count=DIGEST_RECOMMENDATIONS, since=parts.since)
    return _message(
        user=user,
        frequency=frequency,
        papers=parts.papers,
        total=parts.total,
        since=parts.since,
        followed=parts.followed,
        citations=parts.citations,
        alert_groups=parts.alert_groups,
        alert_count=len(parts.found),
        recommendations=liked,
        changes=parts.changes,
    )


def digest_preview(*, user, now: datetime | None = None) -> EmailMultiAlternatives | None:
    """The digest the reader would be sent next, were it due now (weekly when digests are off),
    read but neither sent nor recorded; None when it would hold nothing."""
    now = now or timezone.now()
    profile = Profile.objects.get(user=user)
    frequency = (
        profile.digest_frequency if profile.digest_frequency in PERIODS else Profile.Digest.WEEKLY
    )
    since = profile.last_digest_at or now - PERIODS[frequency]
    parts = _digest_parts(user=user, since=since, now=now)
    return None if parts.empty else _digest_message(user=user, frequency=frequency, parts=parts)


def digest_send(*, user_id: int, now: datetime | None = None) -> DigestOutcome:
    """Send one user the digest for the current period if it is due and has papers."""
    now = now or timezone.now()
    profile = Profile.objects.select_related("user").get(user_id=user_id)
    user = profile.user
    frequency = profile.digest_frequency
    if frequency not in PERIODS or not user.is_active or not user.email:
        return DigestOutcome("off")
    key = period_key(frequency, now)
    if SentDigest.objects.filter(user_id=user_id, period_key=key).exists():
        return DigestOutcome("already-sent", period_key=key)

    since = profile.last_digest_at or now - PERIODS[frequency]
    parts = _digest_parts(user=user, since=since, now=now)
    if parts.empty:
        return DigestOutcome("nothing-new", period_key=key)
    message = _digest_message(user=user, frequency=frequency, parts=parts)
    count = parts.total + len(parts.found)

    with transaction.atomic():
        try:
            with transaction.atomic():
                SentDigest.objects.create(user_id=user_id, period_key=key, paper_count=count)
        except IntegrityError:
            return DigestOutcome("already-sent", period_key=key)
        message.send()
        Profile.objects.filter(pk=profile.pk).update(last_digest_at=now)
    return DigestOutcome("sent", paper_count=count, period_key=key)


def _message(
    *,
    user,
    frequency: str,
    papers: list,
    total: int,
    since: datetime,
    followed: str,
    citations: list | None = None,
    alert_groups: list[AlertGroup] | None = None,
    alert_count: int = 0,
    recommendations: list | None = None,
    changes: list | None = None,
) -> EmailMultiAlternatives:
    unsubscribe = unsubscribe_url(user_id=user.pk)
    context = {
        "papers": papers,
        "citations": citations or [],
        "total": total,
        "shown": len(papers),
        "since": since,
        "followed": followed,
        "alert_groups": alert_groups or [],
        "alert_count": alert_count,
        "recommendations": recommendations or [],
        "changes": changes or [],
        "library_url": f"{settings.SITE_URL}{reverse('accounts:library')}",
        "searches_url": f"{settings.SITE_URL}{reverse('accounts:saved_searches')}",
        "frequency": Profile.Digest(frequency).label.lower(),
        "SITE_URL": settings.SITE_URL,
        "unsubscribe_url": unsubscribe,
        "feed_url": f"{settings.SITE_URL}{reverse('accounts:following')}",
        "settings_url": f"{settings.SITE_URL}{reverse('accounts:settings')}",
    }
    parts = []
    if total:
        parts.append(f"{total} new paper{'s' if total != 1 else ''} by {followed}")
    elif citations:
        n = len(citations)
        parts.append(f"{n} new paper{'s' if n != 1 else ''} citing {followed}")
    if alert_count:
        parts.append(
            f"{alert_count} new paper{'s' if alert_count != 1 else ''} for your saved searches"
        )
    if changes and not parts:
        parts.append(f"news of {len(changes)} paper{'s' if len(changes) != 1 else ''} you keep")
    subject = "[wovepaper] " + " and ".join(parts)
    message = EmailMultiAlternatives(
        subject=subject,
        body=render_to_string("accounts/email/digest.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[user.email],
        headers={
            "List-Unsubscribe": f"<{unsubscribe}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        },
    )
    message.attach_alternative(render_to_string("accounts/email/digest.html", context), "text/html")
    return message


def digests_send_due(*, now: datetime | None = None, batch_size: int = 500) -> dict[str, int]:
    """Send every due digest. A failure for one user is logged and the run goes on. Idempotent."""
    now = now or timezone.now()
    summary = {"sent": 0, "already-sent": 0, "nothing-new": 0, "off": 0, "failed": 0}
    User = get_user_model()
    for frequency in PERIODS:
        key = period_key(frequency, now)
        user_ids = (
            Profile.objects.filter(
                Q(user__follows__isnull=False)
                | Q(user__institution_follows__isnull=False)
                | Q(user__saved_searches__isnull=False),
                digest_frequency=frequency,
                user__is_active=True,
            )
            .exclude(user__sent_digests__period_key=key)
            .values_list("user_id", flat=True)
            .distinct()
            .order_by("user_id")
        )
        last = 0
        while True:
            batch = list(user_ids.filter(user_id__gt=last)[:batch_size])
            if not batch:
                break
            last = batch[-1]
            for user_id in batch:
                try:
                    outcome = digest_send(user_id=user_id, now=now)
                except (User.DoesNotExist, Profile.DoesNotExist):
                    continue
                except Exception:
                    logger.exception("digest for user %s failed", user_id)
                    summary["failed"] += 1
                    continue
                summary[outcome.status] += 1
    return summary
