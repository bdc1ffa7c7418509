from __future__ import annotations

from django.conf import settings
from django.db import models


class Conversation(models.Model):
    """A chat with the papers, kept for its user (chat.answers). `scope` is the page it was
    opened from ("paper:2401.01234", "researcher:42"; blank: the whole index)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations"
    )
    title = models.CharField(max_length=200)
    scope = models.CharField(max_length=80, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Made in accounts, moved here with its table as it was (migration 0001).
        db_table = "accounts_conversation"
        indexes = [models.Index(fields=["user", "-updated_at"], name="conversation_user_idx")]

    def __str__(self) -> str:
        return f"conversation {self.pk} of user {self.user_id}: {self.title[:40]}"

    def get_absolute_url(self) -> str:
        return f"/chat/{self.pk}"


class ChatMessage(models.Model):
    """A question or an answer. An answer records how it was made (`mode`: a model's answer,
    quoted abstracts, nothing relevant found, or an error), the papers it cites, and the
    tokens the model call used (the per-user quota counts them)."""

    class Role(models.TextChoices):
        USER = "user", "user"
        ASSISTANT = "assistant", "assistant"

    class Mode(models.TextChoices):
        PENDING = "pending", "pending"
        STREAMING = "streaming", "being made"
        MODEL = "model", "model"
        QUOTED = "quoted", "quoted"
        NOTHING_FOUND = "nothing", "nothing found"
        ERROR = "error", "error"

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    # The conversation's user, kept on each message so the quotas are one index range each.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_messages"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField(blank=True)
    mode = models.CharField(max_length=16, choices=Mode.choices, blank=True)
    citations = models.JSONField(default=list, blank=True)
    model = models.CharField(max_length=128, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    # Tokens set aside for an answer from a model while it is pending or being made, so that
    # questions asked at once cannot all pass a budget that only some of them fit.
    reserved_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "accounts_chatmessage"
        ordering = ["created_at", "pk"]
        indexes = [
            models.Index(fields=["conversation", "created_at"], name="chatmessage_conv_idx"),
            models.Index(fields=["user", "role", "created_at"], name="chatmessage_quota_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.role} message {self.pk} in conversation {self.conversation_id}"

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens
