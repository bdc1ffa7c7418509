from __future__ import annotations

from django.urls import path

from . import views

urlpatterns = [
    path("institutions/", views.InstitutionListView.as_view(), name="api-institution-list"),
    path(
        "institutions/<api_institution:key>/",
        views.InstitutionDetailView.as_view(),
        name="api-institution-detail",
    ),
    path(
        "institutions/<api_institution:key>/papers/",
        views.InstitutionPapersView.as_view(),
        name="api-institution-papers",
    ),
    path(
        "search/institutions/",
        views.InstitutionSearchView.as_view(),
        name="api-search-institutions",
    ),
]
