"""The reader's feed (/following): new papers by whom they follow, and beside them the papers
citing those researchers, their saved searches' finds, papers like their library and the news
of the papers they keep."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from papers.archive_time import archive_time
from papers.citations.lists import citations_of_researchers
from papers.models import Paper
from papers.selectors import papers_with_short_bylines
from researchers.similar import more_like_followed
from wovepaper.lib.negotiation import render_page
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from .feed import FeedPage, paper_changes_for_user
from .follows import (
    followed_institution_ids,
    followed_researcher_ids,
    follows_for_user,
    institution_follows_for_user,
)
from .library import alerts, recommendations

FEED_PAGE_SIZE = 20
# The newest papers citing the followed researchers' papers, beside their new papers.
FEED_CITATIONS = 10
FEED_MAX_PAGES = 25
FEED_ALERTS = 20
# "Papers like your library" in the feed.
FEED_RECOMMENDATIONS = 5
# New versions, withdrawals and journal references of saved or followed papers in the feed.
FEED_CHANGES = 20
# ... of this age at most, so that the query reads a bounded range of the recorded-at index.
FEED_CHANGES_AGE = timedelta(days=30)


SIDEBAR_FOLLOWS = 30


@login_required
@require_GET
def following(request: AuthenticatedHttpRequest) -> HttpResponse:
    ids = followed_researcher_ids(user=request.user)
    institution_ids = followed_institution_ids(user=request.user)
    page = feed = None
    papers: list = []
    if ids or institution_ids:
        feed = FeedPage(
            researcher_ids=ids,
            institution_ids=institution_ids,
            limit=FEED_PAGE_SIZE * FEED_MAX_PAGES,
        )
        # Paginator only counts and slices its list, which FeedPage does (it is no sequence).
        paginator: Paginator[Paper] = Paginator(feed, FEED_PAGE_SIZE)  # type: ignore[arg-type]
        page = paginator.get_page(request.GET.get("page"))
        papers = papers_with_short_bylines(page.object_list, focus_ids=ids)
    follows = list(follows_for_user(user=request.user)[: SIDEBAR_FOLLOWS + 1])
    liked = recommendations.library_recommendations(user=request.user, count=FEED_RECOMMENDATIONS)
    context = {
        "papers": papers,
        "page": page,
        "total": feed.total if feed else 0,
        "follows": follows[:SIDEBAR_FOLLOWS],
        "more_follows": len(follows) > SIDEBAR_FOLLOWS,
        "institution_follows": list(
            institution_follows_for_user(user=request.user)[:SIDEBAR_FOLLOWS]
        )
        if institution_ids
        else [],
        "empty_message": "None of the researchers and institutions you follow has a paper here "
        "yet.",
        "suggestions": more_like_followed([f.researcher for f in follows], exclude=ids),
        "citation_alerts": citations_of_researchers(ids, limit=FEED_CITATIONS),
        # The newest papers the reader's saved searches found, by search (one query).
        "alert_groups": alerts.alerts_grouped(
            alerts.alerts_for_user(user=request.user, limit=FEED_ALERTS)
        ),
        "recommendations": liked,
        # Why there are none, when the reason is that nothing is saved.
        "nothing_saved": "Save papers to a list, and papers like them show here."
        if getattr(liked, "nothing_saved", False)
        else "",
        "recommendation_days": recommendations.recommendation_days(),
        "clock": archive_time(),
        "paper_changes": paper_changes_for_user(
            user=request.user,
            researcher_ids=ids,
            since=timezone.now() - FEED_CHANGES_AGE,
            limit=FEED_CHANGES,
        ),
    }
    return render_page(request, "accounts/following", context)
