"""Reads about researchers shared by pages, the API, feeds and tasks."""

from __future__ import annotations

import re
import unicodedata

from .models import Researcher

# A merge chain longer than this is a curation error (or a cycle); stop instead of looping.
MAX_MERGE_HOPS = 32


def researcher_survivor_id(researcher_id: int) -> int | None:
    """The id that `researcher_id` was finally merged into (itself if never merged).

    One query per hop; None when the id is unknown or the chain does not end (a cycle).
    """
    current = researcher_id
    seen: set[int] = set()
    for _ in range(MAX_MERGE_HOPS):
        row = Researcher.objects.filter(pk=current).values_list("merged_into_id", flat=True)
        merged = list(row)
        if not merged:
            return None
        if merged[0] is None:
            return current
        seen.add(current)
        current = merged[0]
        if current in seen:
            return None
    return None


def researcher_name_key(name: str) -> str:
    """The `name_key` form of a name: lower-case, accents folded, punctuation dropped."""
    folded = unicodedata.normalize("NFKD", name)
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch)).lower()
    folded = re.sub(r"[^\w\s]|_", "", folded)
    return " ".join(folded.split())
