"""Keyword and semantic ranking fused in one place: reciprocal rank fusion (Cormack, Clarke and
Buettcher, 2009), each document scored by the sum of weight / (RRF_K + rank) over the lists it
is in. A document both rankings place high wins; one that only a paraphrase finds (no shared
word) or only an exact rare word finds still comes up.

The keyword ranking is the engine's (every word must match) and, when no paper has every word
of a query of several, the papers that match some of them (`SearchQuery.any_word`). A query in
other words than the paper's (a half-remembered title) rarely has every word of any paper, so
without this the keyword side adds nothing to the fusion; a partial match is weaker evidence
than a full one, so its ranks weigh RELAXED_WEIGHT. Where some paper has every word, partial
matches are not asked for: fused with the semantic ranking, a hundred papers sharing a word or
two with the query outvoted the paper with all of them (benchmarks/semantic.py fusion).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .base import SearchBackend, SearchPage, SearchQuery, with_slice

# Lower than the paper's 60: first places count for more. RRF_K and RELAXED_WEIGHT were chosen
# together on known-item paraphrases (benchmarks/data/known-item-paraphrases.tsv). No fusion of
# a wider grid, rank or score, chosen on half of the paraphrases did better on the other half
# (one held-out paper more of 103 in the first 10, with a lower MRR), so they stay.
# `python benchmarks/semantic.py fusion` reruns the comparison (README, "Semantic search"
# under Performance, has its figures).
RRF_K = 5
# How many of each ranking's first ids are fused: at least this many, so that the first page
# weighs more than its own 20 of each, and at most FUSED_MAX (past it, pages go on in
# keyword order, which is exact and cheap to page).
FUSED_MIN = 100
FUSED_MAX = 1_000
# The weight of a rank in the keyword ranking's any-word part (the full matches' weigh 1, as
# the semantic ranking's do). Chosen with RRF_K (see there).
RELAXED_WEIGHT = 0.5


def _add_ranks(
    scores: dict[int, float], ranking: Sequence[int], k: int, weight: float = 1.0, first: int = 1
) -> None:
    """Add each id's weight / (k + rank) to `scores`, ranks counted from `first`."""
    for rank, item in enumerate(ranking, start=first):
        scores[item] = scores.get(item, 0.0) + weight / (k + rank)


def _best_first(scores: dict[int, float]) -> list[int]:
    """Ids by fused score, best first (ties: first seen first)."""
    return sorted(scores, key=lambda item: -scores[item])


def reciprocal_rank_fusion(*rankings: Sequence[int], k: int = RRF_K) -> list[int]:
    """Ids of all rankings, best fused score first (ties: first seen first)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        _add_ranks(scores, ranking, k)
    return _best_first(scores)


def fuse(
    keyword: Sequence[int],
    relaxed: Sequence[int],
    semantic: Sequence[int],
    *,
    k: int = RRF_K,
    relaxed_weight: float = RELAXED_WEIGHT,
) -> list[int]:
    """The hybrid ranking: the full keyword matches, then the any-word ones not among them
    (ranked on after the full ones, each rank weighing `relaxed_weight`), fused with the
    semantic ranking."""
    scores: dict[int, float] = {}
    full = set(keyword)
    _add_ranks(scores, keyword, k)
    partial = [i for i in relaxed if i not in full]
    _add_ranks(scores, partial, k, relaxed_weight, first=len(keyword) + 1)
    _add_ranks(scores, semantic, k)
    return _best_first(scores)


class HybridBackend(SearchBackend):
    """Both rankings fused for relevance; the keyword backend's exact order for the date and
    citation sorts (a similarity adds nothing to "newest first")."""

    engine = "hybrid"

    def __init__(self, collection, *, keyword: SearchBackend, semantic: SearchBackend) -> None:
        super().__init__(collection)
        self.keyword = keyword
        self.semantic = semantic

    def rankings(
        self, query: SearchQuery, depth: int
    ) -> tuple[SearchPage[int], list[int], SearchPage[int]]:
        """The first `depth` of the keyword ranking (every word), the any-word ranking's ids
        (asked only when no paper has every word of a query of several: else []), and
        the semantic ranking; the semantic page is empty when nothing is embedded yet (then
        nothing else is asked)."""
        semantic = self.semantic.search(with_slice(query, offset=0, limit=depth))
        if not semantic.items:
            return SearchPage(), [], semantic
        keyword = self.keyword.search(with_slice(query, offset=0, limit=depth))
        relaxed: list[int] = []
        if not keyword.items and len(query.clauses()) > 1:
            relaxed = self.keyword.search(
                replace(query, any_word=True, offset=0, limit=depth)
            ).items
        return keyword, relaxed, semantic

    def search(self, query: SearchQuery) -> SearchPage[int]:
        if query.sort != "relevance":
            return self.keyword.search(query)
        wanted = query.offset + query.limit
        if wanted > FUSED_MAX:
            return self.keyword.search(query)
        keyword, relaxed, semantic = self.rankings(query, max(FUSED_MIN, wanted))
        if not semantic.items:  # nothing embedded yet: the keyword page, with its exact counts
            return self.keyword.search(query)
        fused = fuse(keyword.items, relaxed, semantic.items)
        total = max(keyword.total, len(fused))
        return SearchPage(
            items=fused[query.offset : wanted],
            total=total,
            total_is_capped=keyword.total_is_capped or semantic.total_is_capped,
            approximate=True,
            by_meaning=True,
        )
