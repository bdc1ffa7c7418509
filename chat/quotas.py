"""Chat's quotas per user: CHAT_MESSAGES_PER_HOUR questions, and CHAT_TOKENS_PER_DAY model
tokens counting what answers still being made have set aside. `chat.answers.ask` checks them
and counts the question in one step."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

from wovepaper.lib import llm

from .models import ChatMessage


class QuotaExceeded(Exception):
    """The reason to show, and in how many seconds asking again may work (None: unknown)."""

    def __init__(self, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def quota_check(user, *, reserve: int = 0) -> QuotaExceeded | None:
    """Why this user may not ask now, with when asking may work again; None when they may.
    `reserve`: the tokens the new answer sets aside; it must fit beside what was used and what
    answers still being made have set aside."""
    now = timezone.now()
    mine = ChatMessage.objects.filter(user=user)
    hour_ago = now - timedelta(hours=1)
    asked = mine.filter(role=ChatMessage.Role.USER, created_at__gte=hour_ago)
    limit = settings.CHAT_MESSAGES_PER_HOUR
    count = asked.count()
    if count >= limit:
        # A question may be asked again once all but limit - 1 of these are an hour old.
        freed = asked.order_by("created_at").values_list("created_at", flat=True)[count - limit]
        return QuotaExceeded(
            f"You have asked {limit} questions in the last hour, the most one account may; "
            "please try again later.",
            _seconds_until(freed + timedelta(hours=1), now),
        )
    day_ago = now - timedelta(days=1)
    spent = mine.filter(role=ChatMessage.Role.ASSISTANT, created_at__gte=day_ago)
    used = spent.aggregate(prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"))
    tokens = (used["prompt"] or 0) + (used["completion"] or 0)
    # An answer still being made holds its reservation; one left pending for an hour (its
    # page was closed) has stopped holding it.
    in_flight = spent.filter(
        mode__in=[ChatMessage.Mode.PENDING, ChatMessage.Mode.STREAMING], created_at__gte=hour_ago
    ).aggregate(reserved=Sum("reserved_tokens"))["reserved"]
    tokens += in_flight or 0
    budget = settings.CHAT_TOKENS_PER_DAY
    if tokens >= budget or (reserve and tokens + reserve > budget):
        # Tokens come back as the answers that used them turn a day old, oldest first (a
        # day's answers are bounded by the hourly quota).
        left = tokens
        freed_at = now + timedelta(days=1)
        for made, prompt, completion in spent.order_by("created_at").values_list(
            "created_at", "prompt_tokens", "completion_tokens"
        ):
            left -= (prompt or 0) + (completion or 0)
            if left < budget:
                freed_at = made + timedelta(days=1)
                break
        return QuotaExceeded(
            f"Your answers used {tokens:,} model tokens in the last 24 hours, past the "
            f"{budget:,} one account may use a day; please try again later.",
            _seconds_until(freed_at, now),
        )
    return None


def _seconds_until(moment, now) -> int:
    return max(1, int((moment - now).total_seconds() + 0.999))


def quota_problem(user) -> str:
    """Why this user may not ask now, or ""."""
    problem = quota_check(user, reserve=answer_reserve())
    return str(problem) if problem else ""


def answer_reserve() -> int:
    """The most an answer is expected to cost, set aside before it is made: nothing without a
    model (quoted answers cost no tokens)."""
    return settings.CHAT_TOKENS_RESERVED_PER_ANSWER if llm.ModelConfig.from_settings() else 0
