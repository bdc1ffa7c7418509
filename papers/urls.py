from __future__ import annotations

from django.urls import include, path

from . import views
from .feeds import (
    CategoryAtomFeed,
    CategoryFeed,
    CitingPapersAtomFeed,
    CitingPapersFeed,
    LatestPapersAtomFeed,
    LatestPapersFeed,
)

# The paper page is named under "papers:"; the list and the feeds keep the site-wide names they
# had before they moved here from wovepaper/urls.py, so this module sets no app_name.
paper_urlpatterns = [
    path(
        "papers/<api_arxiv_id:arxiv_id>/cite.<cite_ext:extension>",
        views.paper_citation,
        name="cite",
    ),
    path(
        "papers/<api_arxiv_id:arxiv_id>/references",
        views.paper_references_list,
        name="references",
    ),
    path("papers/<api_arxiv_id:arxiv_id>/cited-by", views.paper_cited_by_list, name="cited-by"),
    path(
        "papers/<api_arxiv_id:arxiv_id>/cited-by.rss",
        CitingPapersFeed(),
        name="feed-cited-by-rss",
    ),
    path(
        "papers/<api_arxiv_id:arxiv_id>/cited-by.atom",
        CitingPapersAtomFeed(),
        name="feed-cited-by-atom",
    ),
    path("papers/<paper_key:arxiv_id>", views.paper_detail, name="detail"),
]

urlpatterns = [
    path("feeds/latest.rss", LatestPapersFeed(), name="feed-latest-rss"),
    path("feeds/latest.atom", LatestPapersAtomFeed(), name="feed-latest-atom"),
    path("feeds/category/<category:code>.rss", CategoryFeed(), name="feed-category-rss"),
    path("feeds/category/<category:code>.atom", CategoryAtomFeed(), name="feed-category-atom"),
    path("papers", views.papers_list, name="papers"),
    path("", include((paper_urlpatterns, "papers"))),
]
