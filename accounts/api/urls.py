from __future__ import annotations

from django.urls import path

from ..library.api import urls as library_api_urls
from .views import FollowDetailApi, FollowListApi

app_name = "accounts_api"

# Included under /api/v1/me/ by wovepaper/urls.py.
urlpatterns = [
    path("follows/", FollowListApi.as_view(), name="follows"),
    path("follows/<api_id:researcher_id>/", FollowDetailApi.as_view(), name="follow"),
    *library_api_urls.urlpatterns,
]
