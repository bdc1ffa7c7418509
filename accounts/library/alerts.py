"""Saved searches' alerts: a reader saves a search as it stands (words, mode, filters; see
accounts.library.saved_searches), and a periodic sweep (`accounts.tasks.check_saved_searches`)
runs each one over the papers published since its last check, keeping what it finds as
SearchAlert rows. The feed, the digest and the reader's private Atom/RSS feed read those rows (a
range of one index), so they cost the same few queries whether a reader has one saved search or
SAVED_SEARCH_MAX.

A search runs through the paper search the site's search page uses (`papers.search`), mode for
mode: by words, a paper contains them; by meaning, the vector backends answer only a query that
means something here (wovepaper.lib.search.evidence) and stop at the floor per paper
(SEARCH_SIMILARITY_FLOOR), so a meaning search alerts only on papers near it; hybrid alerts on
both, as its page lists both.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from papers.archive_time import archive_time
from papers.models import Paper, PaperChange
from papers.search import paper_search
from wovepaper.lib.bounds import day_after

from .. import feed, follows
from ..models import Profile
from .models import SavedSearch, SearchAlert
from .saved_searches import saved_search_label

logger = logging.getLogger(__name__)

# The first check looks this far back, so that a new saved search shows what it would have
# announced lately rather than nothing.
FIRST_CHECK_DAYS = 7
# arXiv announces a paper a day or more after its `published` date, and a harvest may arrive
# later still: each check looks back this much before the last one. A paper found twice is
# kept once (the (search, paper) constraint).
LATE_ANNOUNCEMENT_DAYS = 3
# Papers one check keeps at most per search: a search so broad that it finds more in one
# sweep is better narrowed than read.
ALERTS_PER_CHECK = 50
ALERT_FEED_ITEMS = 100
# News of kept papers in the private feed goes back as far as on /following.
ALERT_FEED_CHANGES_AGE = timedelta(days=30)


def saved_search_check(*, saved: SavedSearch, now: datetime | None = None) -> int:
    """Run the search over the papers published since its last check (less
    LATE_ANNOUNCEMENT_DAYS; FIRST_CHECK_DAYS back the first time) and keep what it finds as
    alerts, at most ALERTS_PER_CHECK. Returns how many alerts are new. Idempotent: a paper found
    again is not announced again. The search engines' calls, then two queries."""
    now = now or timezone.now()
    clock = archive_time(now=now)
    if clock.is_sample:
        # A sample's papers are years apart: the window is all of it (papers.archive_time).
        window_start = clock.window_start(FIRST_CHECK_DAYS).date()
    else:
        since = saved.checked_at or now - timedelta(days=FIRST_CHECK_DAYS)
        window_start = (since - timedelta(days=LATE_ANNOUNCEMENT_DAYS)).date()
    date_from = max(window_start, saved.date_from) if saved.date_from else window_start
    papers: list[Paper] = []
    if saved.date_to is None or saved.date_to >= date_from:
        found = paper_search(
            saved.query,
            mode=saved.mode,
            category=saved.category or None,
            date_from=date_from,
            # The search page's `date_to` is the last day shown; the search's is exclusive (and
            # none past the last day there is, which failed every hourly check).
            date_to=day_after(saved.date_to),
            limit=ALERTS_PER_CHECK,
        )
        papers = [*found.items, *found.related][:ALERTS_PER_CHECK]
    with transaction.atomic():
        before = SearchAlert.objects.filter(saved_search=saved).count()
        SearchAlert.objects.bulk_create(
            [
                SearchAlert(saved_search=saved, user_id=saved.user_id, paper=p, found_at=now)
                for p in papers
                if not p.is_deleted
            ],
            ignore_conflicts=True,
        )
        SavedSearch.objects.filter(pk=saved.pk).update(checked_at=now)
        return SearchAlert.objects.filter(saved_search=saved).count() - before


@dataclass(frozen=True)
class CheckSchedule:
    """When saved searches are checked again: every hour at ALERT_CHECK_MINUTE where celery
    beat runs (a broker is configured), else only when one is saved and by
    `manage.py check_saved_searches` (the demo, the embedded default)."""

    hourly: bool
    minute: int
    next_at: datetime | None


def check_schedule(*, now: datetime | None = None) -> CheckSchedule:
    now = now or timezone.now()
    minute = int(settings.ALERT_CHECK_MINUTE)
    if not settings.CELERY_BROKER_URL:
        return CheckSchedule(hourly=False, minute=minute, next_at=None)
    at = now.replace(minute=minute, second=0, microsecond=0)
    return CheckSchedule(
        hourly=True, minute=minute, next_at=at if at > now else at + timedelta(hours=1)
    )


def saved_searches_check_due(*, now: datetime | None = None, batch_size: int = 200) -> int:
    """Check every saved search of an active reader, in id order and in batches. A failing
    search is logged and skipped (its checked_at stays, so the next sweep looks back as far).
    Returns the new alerts."""
    now = now or timezone.now()
    new = 0
    last_id = 0
    due = SavedSearch.objects.filter(user__is_active=True).order_by("id")
    while True:
        batch = list(due.filter(id__gt=last_id)[:batch_size])
        if not batch:
            return new
        last_id = batch[-1].pk
        for saved in batch:
            try:
                new += saved_search_check(saved=saved, now=now)
            except Exception:
                logger.exception("saved search %s: check failed", saved.pk)


def alerts_for_user(
    *, user: User, since: datetime | None = None, limit: int = ALERT_FEED_ITEMS
) -> list[SearchAlert]:
    """The reader's newest alerts across their searches, with their papers and searches: one
    range of the (user, -found_at) index, whatever the number of searches."""
    alerts: QuerySet[SearchAlert] = SearchAlert.objects.filter(user=user)
    if since is not None:
        alerts = alerts.filter(found_at__gt=since)
    return list(
        alerts.select_related("paper", "saved_search")
        .filter(paper__is_deleted=False)
        .order_by("-found_at", "-id")[:limit]
    )


@dataclass
class AlertGroup:
    saved_search: SavedSearch
    label: str
    papers: list[Paper]


def alerts_grouped(alerts: list[SearchAlert]) -> list[AlertGroup]:
    """Alerts grouped by their search, the search with the newest alert first."""
    groups: dict[int, AlertGroup] = {}
    for alert in alerts:
        group = groups.get(alert.saved_search_id)
        if group is None:
            group = groups[alert.saved_search_id] = AlertGroup(
                alert.saved_search, saved_search_label(alert.saved_search), []
            )
        group.papers.append(alert.paper)
    return list(groups.values())


def alert_feed_token(*, user: User) -> str:
    """The secret of the reader's alert feed, made on first use."""
    profile, _ = Profile.objects.get_or_create(
        user=user, defaults={"onboarding": Profile.Onboarding.COMPLETED}
    )
    if not profile.alert_feed_token:
        profile.alert_feed_token = secrets.token_urlsafe(24)
        profile.save(update_fields=["alert_feed_token", "modified_at"])
    return profile.alert_feed_token


def alert_feed_token_reset(*, user: User) -> str:
    """A new secret: the old feed URL stops working at once."""
    Profile.objects.filter(user=user).update(alert_feed_token=None)
    return alert_feed_token(user=user)


def alert_feed_user(*, token: str) -> User | None:
    profile = (
        Profile.objects.filter(alert_feed_token=token, user__is_active=True)
        .select_related("user")
        .first()
        if token
        else None
    )
    return profile.user if profile is not None else None


def alert_feed_entries(
    *, user: User, limit: int = ALERT_FEED_ITEMS, now: datetime | None = None
) -> list[SearchAlert | PaperChange]:
    """What the reader's private feed lists, newest first, at most `limit`: the papers their
    saved searches found, and the news ("v3 posted", "withdrawn", "published in …") of papers
    in their lists or by the researchers they follow, of the last ALERT_FEED_CHANGES_AGE, as
    /following shows it. Three queries (the alerts, the follows, the news), whatever the
    number of searches, lists or follows."""
    found: list[SearchAlert | PaperChange] = list(alerts_for_user(user=user, limit=limit))
    since = (now or timezone.now()) - ALERT_FEED_CHANGES_AGE
    found += [
        change
        for change in feed.paper_changes_for_user(
            user=user,
            researcher_ids=follows.followed_researcher_ids(user=user),
            since=since,
            limit=limit,
        )
        if not change.paper.is_deleted
    ]
    found.sort(key=_feed_time, reverse=True)
    return found[:limit]


def _feed_time(entry: SearchAlert | PaperChange) -> datetime:
    return entry.found_at if isinstance(entry, SearchAlert) else entry.recorded_at
