"""The arXiv categories a user can pick as fields of interest.

Names come from papers.taxonomy when that module is present. Without it the list is the
category codes that occur in the archive, read once and cached, each named by its code."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.cache import cache

from papers.models import PaperCategory

CACHE_KEY = "accounts:category-codes:v1"
CACHE_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Category:
    code: str
    name: str

    @property
    def label(self) -> str:
        return f"{self.code}: {self.name}" if self.name and self.name != self.code else self.code


def _taxonomy_names() -> dict[str, str]:
    try:
        from papers import taxonomy  # written by the pages work; optional here
    except ImportError:
        return {}
    table = getattr(taxonomy, "CATEGORY", None) or getattr(taxonomy, "CATEGORIES", None) or {}
    names: dict[str, str] = {}
    if isinstance(table, dict):
        items = table.items()
    else:
        items = ((getattr(c, "code", ""), c) for c in table)
    for code, value in items:
        name = value if isinstance(value, str) else getattr(value, "name", "") or str(value)
        if code:
            names[str(code)] = str(name)
    return names


def _codes_in_archive() -> list[str]:
    codes = cache.get(CACHE_KEY)
    if codes is None:
        codes = sorted(set(PaperCategory.objects.values_list("code", flat=True).distinct()))
        cache.set(CACHE_KEY, codes, CACHE_SECONDS)
    return codes


def category_list() -> list[Category]:
    names = _taxonomy_names()
    if names:
        return [Category(code, names[code]) for code in sorted(names)]
    return [Category(code, code) for code in _codes_in_archive()]


def category_codes() -> set[str]:
    return {c.code for c in category_list()}


def categories_search(query: str, *, limit: int = 60) -> list[Category]:
    """Categories whose code or name contains the query (case-insensitive); all when empty."""
    q = query.strip().lower()
    found = [c for c in category_list() if not q or q in c.code.lower() or q in c.name.lower()]
    return found[:limit] if q else found
