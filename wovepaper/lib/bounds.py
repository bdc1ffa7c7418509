"""Numbers and dates that come from a request, range-checked in one place.

Python's `int()` refuses text of more than 4,300 digits with a ValueError and `date +
timedelta` past 9999-12-31 with an OverflowError: both were 500s where a reader had typed (or a
scanner had sent) an absurd value. Every page number, page size and inclusive end date a
request gives goes through these functions instead.
"""

from __future__ import annotations

from datetime import date, timedelta

from django.db.models import QuerySet
from django.utils import timezone

# Enough for any database id (bigint) and any page; longer digit strings are not numbers we use.
MAX_DIGITS = 18


def whole_number(
    text: str | None, *, minimum: int = 0, maximum: int = 10**MAX_DIGITS
) -> int | None:
    """`text` as a whole number (ASCII digits only) from `minimum` to `maximum`, else None."""
    if not text or len(text) > MAX_DIGITS or not (text.isascii() and text.isdigit()):
        return None
    value = int(text)
    return value if minimum <= value <= maximum else None


def day_after(end: date | None) -> date | None:
    """The exclusive bound of an inclusive end date: the next day, or None (no bound) for the
    last day there is."""
    if end is None or end >= date.max:
        return None
    return end + timedelta(days=1)


def made_in_the_last_hour(rows: QuerySet, *, field: str = "created_at") -> int:
    """How many of `rows` were made in the last hour: what a per-hour limit on a reader's
    writes (claims, reports) counts."""
    return rows.filter(**{f"{field}__gte": timezone.now() - timedelta(hours=1)}).count()
