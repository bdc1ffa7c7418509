from __future__ import annotations

from django.urls import path

from .views import (
    FollowDetailApi,
    FollowListApi,
    NotRelevantDetailApi,
    NotRelevantListApi,
    ReadingListCitationApi,
    ReadingListDetailApi,
    ReadingListListApi,
    RecommendationListApi,
    SavedPaperDetailApi,
    SavedPaperListApi,
    SavedSearchDetailApi,
    SavedSearchListApi,
    SearchAlertListApi,
)

app_name = "accounts_api"

# Included under /api/v1/me/ by wovepaper/urls.py.
urlpatterns = [
    path("follows/", FollowListApi.as_view(), name="follows"),
    path("follows/<api_id:researcher_id>/", FollowDetailApi.as_view(), name="follow"),
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
