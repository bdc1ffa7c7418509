from __future__ import annotations

from django.urls import include, path

from wovepaper.lib.api.throttles import throttled_like_the_api

from . import conflict_views, views
from .curation import report_views
from .feeds import (
    ResearcherAtomFeed,
    ResearcherCitedByAtomFeed,
    ResearcherCitedByFeed,
    ResearcherFeed,
)

# The pages are named under "researchers:"; the feeds keep the site-wide names they had before
# they moved here from wovepaper/urls.py, so this module sets no app_name.
researcher_urlpatterns = [
    path("researchers", views.researcher_list, name="list"),
    path("researchers/report", report_views.match_report, name="report"),
    path("conflicts", conflict_views.conflict_check_page, name="conflicts"),
    path(
        "researchers/<api_id:pk>/cite.<cite_ext:extension>",
        throttled_like_the_api(views.researcher_citation),
        name="cite",
    ),
    path("researchers/<page_key:pk>", views.researcher_detail, name="detail"),
    # Before institutions.urls' lookup, whose <path:key> would take it.
    path(
        "institutions/<word_page_key:pk>/researchers",
        views.institution_researchers,
        name="institution-researchers",
    ),
]

urlpatterns = [
    path("researchers/<api_id:pk>/feed.rss", ResearcherFeed(), name="feed-researcher-rss"),
    path("researchers/<api_id:pk>/feed.atom", ResearcherAtomFeed(), name="feed-researcher-atom"),
    path(
        "researchers/<api_id:pk>/cited-by.rss",
        ResearcherCitedByFeed(),
        name="feed-researcher-cited-by-rss",
    ),
    path(
        "researchers/<api_id:pk>/cited-by.atom",
        ResearcherCitedByAtomFeed(),
        name="feed-researcher-cited-by-atom",
    ),
    path("", include((researcher_urlpatterns, "researchers"))),
]
