"""The arXiv categories a user can pick as fields of interest: today's taxonomy, by name."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from papers.taxonomy import CURRENT_CATEGORIES


@dataclass(frozen=True)
class Category:
    code: str
    name: str

    @property
    def label(self) -> str:
        return f"{self.code}: {self.name}"


_CATEGORIES = [Category(code, name) for code, name in sorted(CURRENT_CATEGORIES.items())]
_BY_CODE = {c.code: c for c in _CATEGORIES}


def category_list() -> list[Category]:
    return list(_CATEGORIES)


def categories_by_code(codes: Iterable[str]) -> list[Category]:
    """The known categories among `codes`, in the order given, each once."""
    return [_BY_CODE[code] for code in dict.fromkeys(codes) if code in _BY_CODE]


def category_codes() -> set[str]:
    return set(CURRENT_CATEGORIES)


def categories_search(query: str, *, limit: int = 60) -> list[Category]:
    """Categories whose code or name contains the query (case-insensitive); all when empty."""
    q = query.strip().lower()
    if not q:
        return category_list()
    return [c for c in _CATEGORIES if q in c.code.lower() or q in c.name.lower()][:limit]
