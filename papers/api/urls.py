from __future__ import annotations

from django.urls import path

from . import exports, views

urlpatterns = [
    path("papers/", views.PaperListView.as_view(), name="api-paper-list"),
    path(
        "papers/<api_arxiv_id:arxiv_id>/", views.PaperDetailView.as_view(), name="api-paper-detail"
    ),
    path(
        "papers/<api_arxiv_id:arxiv_id>/references/",
        views.PaperReferencesView.as_view(),
        name="api-paper-references",
    ),
    path(
        "papers/<api_arxiv_id:arxiv_id>/citations/",
        views.PaperCitationsView.as_view(),
        name="api-paper-citations",
    ),
    path(
        "papers/<api_arxiv_id:arxiv_id>/cite.<cite_ext:extension>",
        exports.PaperCitationApi.as_view(),
        name="api-paper-cite",
    ),
    path("search/papers/", views.PaperSearchView.as_view(), name="api-search-papers"),
    path(
        "search/papers/cite.<cite_ext:extension>",
        exports.PaperSearchCitationApi.as_view(),
        name="api-search-papers-cite",
    ),
]
