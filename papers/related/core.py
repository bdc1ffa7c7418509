"""What every strategy of papers.related shares: the papers' vector index, neighbours kept in
the cache until that index changes, the nearest papers to a vector, and the papers shown, read
in one query without the deleted ones."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import numpy as np
from django.core.cache import cache

from wovepaper.lib.search import vector_backend_for
from wovepaper.lib.search.vectors import VectorBackend

from ..models import Paper
from ..search import PAPERS

# Neighbours are kept until the vector index changes (its version is in every key); a day at
# most, so that keys of past versions do not stay.
CACHE_SECONDS = 24 * 3600

T = TypeVar("T")


def paper_vectors_backend() -> VectorBackend:
    return vector_backend_for(PAPERS)


def cached_until_the_index_changes(key: str, compute: Callable[[], T]) -> T:
    """`compute()`, kept under `key` (which names the index's version) for CACHE_SECONDS; an
    empty answer is kept as well, so a paper or researcher without vectors is not asked again."""
    found = cache.get(key)
    if found is None:
        found = compute()
        cache.set(key, found, CACHE_SECONDS)
    return found


def papers_near(
    vector: np.ndarray,
    count: int,
    *,
    exclude: set[int] | frozenset[int] = frozenset(),
    backend: VectorBackend | None = None,
) -> list[tuple[int, float]]:
    """(paper id, cosine similarity) of the `count` papers nearest to `vector` (made a unit
    vector: a centre of several papers is not one), nearest first, none of `exclude`."""
    unit = vector / (np.linalg.norm(vector) or 1.0)
    return (backend or paper_vectors_backend()).similar_to_vector(unit, count, exclude=exclude)


def live_papers(ids: Iterable[int]) -> dict[int, Paper]:
    """The papers of `ids` not deleted, by id: the vector index and the citation graph learn of
    a deletion only later. One query."""
    return Paper.objects.filter(pk__in=list(ids), is_deleted=False).in_bulk()


def counted(n: int, word: str) -> str:
    """`1 paper`, `3 papers`: a reason's count as a reader reads it."""
    return f"{n} {word}{'s' if n != 1 else ''}"
