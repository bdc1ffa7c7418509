"""Keyword and semantic ranking fused in one place: reciprocal rank fusion (Cormack, Clarke and
Buettcher, 2009), each document scored by the sum of 1 / (RRF_K + rank) over the lists it
is in. A document both rankings place high wins; one that only a paraphrase finds (no shared
word) or only an exact rare word finds still comes up."""

from __future__ import annotations

from .base import SearchBackend, SearchPage, SearchQuery, with_slice

RRF_K = 60
# How many of each ranking's first ids are fused: at least this many, so that the first page
# weighs more than its own 20 of each, and at most FUSED_MAX (past it, pages go on in
# keyword order, which is exact and cheap to page).
FUSED_MIN = 100
FUSED_MAX = 1_000


def reciprocal_rank_fusion(*rankings: list[int], k: int = RRF_K) -> list[int]:
    """Ids of all rankings, best fused score first (ties: first seen first)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda item: -scores[item])


class HybridBackend(SearchBackend):
    """Both rankings fused for relevance; the keyword backend's exact order for the date and
    citation sorts (a similarity adds nothing to "newest first")."""

    engine = "hybrid"

    def __init__(self, collection, *, keyword: SearchBackend, semantic: SearchBackend) -> None:
        super().__init__(collection)
        self.keyword = keyword
        self.semantic = semantic

    def search(self, query: SearchQuery) -> SearchPage[int]:
        if query.sort != "relevance":
            return self.keyword.search(query)
        wanted = query.offset + query.limit
        if wanted > FUSED_MAX:
            return self.keyword.search(query)
        depth = max(FUSED_MIN, wanted)
        semantic = self.semantic.search(with_slice(query, offset=0, limit=depth))
        if not semantic.items:  # nothing embedded yet: the keyword page, with its exact counts
            return self.keyword.search(query)
        keyword = self.keyword.search(with_slice(query, offset=0, limit=depth))
        fused = reciprocal_rank_fusion(keyword.items, semantic.items)
        total = max(keyword.total, len(fused))
        return SearchPage(
            items=fused[query.offset : wanted],
            total=total,
            total_is_capped=keyword.total_is_capped or semantic.total_is_capped,
            approximate=True,
            by_meaning=True,
        )
