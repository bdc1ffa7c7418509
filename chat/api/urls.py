from __future__ import annotations

from django.urls import path

from .views import ConversationDetailApi, ConversationListApi, ConversationMessagesApi

app_name = "chat_api"

# Included under /api/v1/me/ by wovepaper/urls.py, beside the account's follows.
urlpatterns = [
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
