"""The archive's own time: what "new" means for saved-search alerts and "papers like your
list".

A daily harvest keeps the archive's newest paper days old, and "new" is the last days before
now. A sample (the demo's bundled arXiv sample: papers from 2007 to 2025, nothing harvested
since) holds no paper of the last days, and its papers are spread over years, so a window of
days before its newest paper would hold one or two: there, a window reaches back over the
whole sample, and the pages that show alerts or recommendations say so.

ARCHIVE_CLOCK picks: "auto" (the default) reads the archive as a sample when its newest paper
is more than ARCHIVE_SAMPLE_AFTER_DAYS old; "now" never does; "sample" always does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db.models import Max, Min
from django.utils import timezone

from .models import Paper

CACHE_KEY = "papers:archive-span"
CACHE_SECONDS = 300


@dataclass(frozen=True)
class ArchiveTime:
    now: datetime
    is_sample: bool
    newest: datetime | None = None
    oldest: datetime | None = None

    def window_start(self, days: int) -> datetime:
        """Where a window of `days` that ends now starts; in a sample, at its first paper."""
        if self.is_sample and self.oldest is not None:
            return self.oldest
        return self.now - timedelta(days=days)


def _span() -> tuple[datetime | None, datetime | None]:
    """(newest, oldest) publication dates held, kept for CACHE_SECONDS (two index ends)."""
    span = cache.get(CACHE_KEY)
    if span is None:
        found = Paper.objects.aggregate(newest=Max("published"), oldest=Min("published"))
        span = (found["newest"], found["oldest"])
        cache.set(CACHE_KEY, span, CACHE_SECONDS)
    return span


def archive_time(*, now: datetime | None = None) -> ArchiveTime:
    """The archive's time now. No query with ARCHIVE_CLOCK "now"; else one, cached."""
    now = now or timezone.now()
    clock = settings.ARCHIVE_CLOCK
    if clock == "now":
        return ArchiveTime(now=now, is_sample=False)
    newest, oldest = _span()
    stale = newest is not None and newest < now - timedelta(days=settings.ARCHIVE_SAMPLE_AFTER_DAYS)
    return ArchiveTime(now=now, is_sample=clock == "sample" or stale, newest=newest, oldest=oldest)


def archive_span_forget() -> None:
    """Read the span afresh at the next call (after an import; tests)."""
    cache.delete(CACHE_KEY)
