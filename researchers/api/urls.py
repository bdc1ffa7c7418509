from __future__ import annotations

from django.urls import path

from . import conflicts, exports, identity, views

urlpatterns = [
    path("researchers/", views.ResearcherListView.as_view(), name="api-researcher-list"),
    path(
        "researchers/<api_id:pk>/",
        views.ResearcherDetailView.as_view(),
        name="api-researcher-detail",
    ),
    path(
        "researchers/<api_id:pk>/papers/",
        views.ResearcherPapersView.as_view(),
        name="api-researcher-papers",
    ),
    path(
        "researchers/<api_id:pk>/cite.<cite_ext:extension>",
        exports.ResearcherCitationApi.as_view(),
        name="api-researcher-cite",
    ),
    path(
        "researchers/<api_id:pk>/same-name/",
        views.ResearcherSameNameView.as_view(),
        name="api-researcher-same-name",
    ),
    path(
        "researchers/<api_id:pk>/identity/",
        identity.ResearcherIdentityView.as_view(),
        name="api-researcher-identity",
    ),
    # Researchers at an institution live here: researchers may depend on institutions, not the
    # reverse.
    path(
        "institutions/<api_institution:key>/researchers/",
        views.InstitutionResearchersView.as_view(),
        name="api-institution-researchers",
    ),
    path("conflicts/", conflicts.ConflictCheckApi.as_view(), name="api-conflicts"),
    path(
        "search/researchers/", views.ResearcherSearchView.as_view(), name="api-search-researchers"
    ),
]
