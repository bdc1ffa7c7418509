"""Saved searches: a reader saves a search as it stands (words, mode, filters), at most
SAVED_SEARCH_MAX; the same search twice is one. What a saved search finds is in
accounts.library.alerts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.contrib.auth.models import User
from django.db.models import Count, F, Q

from papers.search import MODES

from .models import SavedSearch

SAVED_SEARCH_MAX = 50


class SavedSearchError(ValueError):
    """A search that cannot be saved; the message is shown to the reader."""


@dataclass(frozen=True)
class SearchTerms:
    query: str
    mode: str = "hybrid"
    category: str = ""
    date_from: date | None = None
    date_to: date | None = None


def saved_search_label(saved: SavedSearch) -> str:
    """How a saved search is named on pages, in the digest and in the feed."""
    parts = [f"“{saved.query}”"]
    if saved.mode != "hybrid":
        parts.append("by meaning" if saved.mode == "semantic" else "by words")
    if saved.category:
        parts.append(f"in {saved.category}")
    if saved.date_from:
        parts.append(f"from {saved.date_from.isoformat()}")
    if saved.date_to:
        parts.append(f"to {saved.date_to.isoformat()}")
    return " ".join(parts)


def saved_search_create(*, user: User, terms: SearchTerms) -> SavedSearch:
    """Save a search. Saving the same search twice returns the one saved; at most
    SAVED_SEARCH_MAX a reader."""
    query = " ".join(terms.query.split())[:300]
    if not query:
        raise SavedSearchError("A saved search needs words to look for.")
    mode = terms.mode if terms.mode in MODES else "hybrid"
    search = {
        "user": user,
        "query": query,
        "mode": mode,
        "category": terms.category,
        "date_from": terms.date_from,
        "date_to": terms.date_to,
    }
    same = SavedSearch.objects.filter(**search).first()
    if same is not None:
        return same
    if SavedSearch.objects.filter(user=user).count() >= SAVED_SEARCH_MAX:
        raise SavedSearchError(f"You have {SAVED_SEARCH_MAX} saved searches, as many as we keep.")
    return SavedSearch.objects.create(**search)


def saved_search_delete(*, saved: SavedSearch) -> None:
    """Delete the search and the alerts it found."""
    saved.delete()


def saved_searches_for_user(*, user: User) -> list[SavedSearch]:
    """The reader's saved searches, newest first (at most SAVED_SEARCH_MAX: one query), each
    with `found_total` (the papers it has announced) and `found_last` (those its last check
    found: their found_at is that check's time)."""
    return list(
        SavedSearch.objects.filter(user=user)
        .annotate(
            found_total=Count("alerts"),
            found_last=Count("alerts", filter=Q(alerts__found_at=F("checked_at"))),
        )
        .order_by("-created_at", "-id")
    )
