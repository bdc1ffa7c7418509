"""The library's API, under the `accounts_api` namespace (accounts/api/urls.py takes it in, under
/api/v1/me/)."""

from __future__ import annotations

from django.urls import path

from .lists import (
    ReadingListCitationApi,
    ReadingListDetailApi,
    ReadingListListApi,
    SavedPaperDetailApi,
    SavedPaperListApi,
)
from .recommendations import NotRelevantDetailApi, NotRelevantListApi, RecommendationListApi
from .searches import SavedSearchDetailApi, SavedSearchListApi, SearchAlertListApi

urlpatterns = [
    path("lists/", ReadingListListApi.as_view(), name="lists"),
    path("lists/<api_id:list_id>/", ReadingListDetailApi.as_view(), name="list"),
    path("lists/<api_id:list_id>/papers/", SavedPaperListApi.as_view(), name="list_papers"),
    path(
        "lists/<api_id:list_id>/cite.<cite_ext:extension>",
        ReadingListCitationApi.as_view(),
        name="list_cite",
    ),
    path(
        "lists/<api_id:list_id>/recommendations/",
        RecommendationListApi.as_view(),
        name="list_recommendations",
    ),
    path(
        "lists/<api_id:list_id>/papers/<api_arxiv_id:arxiv_id>/",
        SavedPaperDetailApi.as_view(),
        name="list_paper",
    ),
    path("not-relevant/", NotRelevantListApi.as_view(), name="not_relevant"),
    path(
        "not-relevant/<api_arxiv_id:arxiv_id>/",
        NotRelevantDetailApi.as_view(),
        name="not_relevant_paper",
    ),
    path("searches/", SavedSearchListApi.as_view(), name="searches"),
    path("searches/<api_id:search_id>/", SavedSearchDetailApi.as_view(), name="search"),
    path("searches/<api_id:search_id>/alerts/", SearchAlertListApi.as_view(), name="search_alerts"),
]
