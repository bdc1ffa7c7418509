from __future__ import annotations

from django.urls import path

from . import views

app_name = "chat"

urlpatterns = [
    path("chat", views.chat_page, name="page"),
    path("chat/<int:conversation_id>", views.chat_page, name="conversation"),
    path("chat/ask", views.chat_ask, name="ask"),
    path("chat/answers/<int:answer_id>", views.chat_answer, name="answer"),
    path("chat/answers/<int:answer_id>/stream", views.chat_answer_stream, name="answer_stream"),
    path("chat/<int:conversation_id>/rename", views.chat_rename, name="rename"),
    path("chat/<int:conversation_id>/delete", views.chat_delete, name="delete"),
]
