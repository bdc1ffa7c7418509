from __future__ import annotations

from django.urls import path

from .views import (
    ConversationDetailApi,
    ConversationListApi,
    ConversationMessagesApi,
    FollowDetailApi,
    FollowListApi,
)

app_name = "accounts_api"

# Included under /api/v1/me/ by wovepaper/urls.py.
urlpatterns = [
    path("follows/", FollowListApi.as_view(), name="follows"),
    path("follows/<api_id:researcher_id>/", FollowDetailApi.as_view(), name="follow"),
    path("conversations/", ConversationListApi.as_view(), name="conversations"),
    path(
        "conversations/<api_id:conversation_id>/",
        ConversationDetailApi.as_view(),
        name="conversation",
    ),
    path(
        "conversations/<api_id:conversation_id>/messages/",
        ConversationMessagesApi.as_view(),
        name="conversation_messages",
    ),
]
