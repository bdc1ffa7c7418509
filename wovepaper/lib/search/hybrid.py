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

from .base import FUSED, SearchBackend, SearchPage, SearchQuery, is_joined, with_slice
from .vectors import VectorBackend

# Lower than the paper's 60: first places count for more. RRF_K and RELAXED_WEIGHT were chosen
# together on known-item paraphrases (benchmarks/data/known-item-paraphrases.tsv). No fusion of
# a wider grid, rank or score, chosen on half of the paraphrases did better on the other half
# (one held-out paper more of 103 in the first 10, with a lower MRR), so they stay.
# `python benchmarks/semantic.py fusion` reruns the comparison (README, "Semantic search"
# under Performance, has its figures).
RRF_K = 5
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
    """A relevance page in two parts. First the documents that contain the words: the keyword
    backend's matches and its count, the first FUSED of them reordered by fusion with the
    semantic ranking (and the rest in keyword order, so pages neither repeat nor skip one).
    Then, on the first page, `related`: documents related by meaning that do not contain the
    words, in fused order. For the date and citation sorts, the same documents: those with the
    words in the keyword backend's exact order, the first page's related ones as relevance
    finds them (`_sorted`)."""

    engine = "hybrid"

    def __init__(self, collection, *, keyword: SearchBackend, semantic: VectorBackend) -> None:
        super().__init__(collection)
        self.keyword = keyword
        self.semantic = semantic

    def rankings(
        self, query: SearchQuery, depth: int
    ) -> tuple[SearchPage[int], list[int], SearchPage[int]]:
        """The first `depth` of the keyword ranking (every word), the any-word ranking's ids
        (asked only when no document has every word of a query of several: else []), and the
        semantic ranking above the similarity floor, empty when nothing is embedded yet or
        nothing is close enough.

        The words are searched first: a first-time query's vector is being encoded in another
        thread meanwhile (papers.search.paper_search_ahead), and the keyword engine releases
        the GIL, so the two overlap instead of one waiting for the other."""
        keyword = self.keyword.search(with_slice(query, offset=0, limit=depth))
        relaxed: list[int] = []
        if not keyword.items and len(query.clauses()) > 1:
            # Its ids alone: how many papers share a word with the query is not wanted, and
            # counting them (most of the archive, for common words) is what grew with it.
            relaxed = self.keyword.search(
                replace(query, any_word=True, offset=0, limit=FUSED, counted=False)
            ).items
        # Whether the query means anything here asks which of its words some document holds
        # (evidence.py): keyword rankings that found none of them, unfiltered, settle it
        # before the vector index is searched, where they asked each word alone. A joined
        # word or a quoted phrase is asked as a phrase, which no document may hold though
        # each of its words is held ("knowledge-graph").
        asked_alone = all(
            not clause.is_phrase and not is_joined(clause.words[0]) for clause in query.clauses()
        )
        semantic = self.semantic.search(
            with_slice(query, offset=0, limit=FUSED),
            words_seen=(lambda: bool(keyword.items or relaxed)) if asked_alone else None,
        )
        return keyword, relaxed, semantic

    def search(self, query: SearchQuery) -> SearchPage[int]:
        if query.sort != "relevance":
            return self._sorted(query)
        if query.offset >= FUSED:
            return self.keyword.search(query)
        wanted = query.offset + query.limit
        keyword, relaxed, semantic = self.rankings(query, max(FUSED, wanted))
        if not semantic.items:
            # Nothing embedded, or nothing close enough: the keyword page (the ranking's
            # slice: it holds the first `wanted`), nothing related.
            return replace(
                keyword,
                items=keyword.items[query.offset : wanted],
                scores=keyword.scores[query.offset : wanted],
            )
        return self._fused(query, keyword, relaxed, semantic)

    def _fused(
        self,
        query: SearchQuery,
        keyword: SearchPage[int],
        relaxed: list[int],
        semantic: SearchPage[int],
    ) -> SearchPage[int]:
        wanted = query.offset + query.limit
        head = keyword.items[:FUSED]
        fused = fuse(head, relaxed, semantic.items)
        in_head = set(head)
        with_words = [i for i in fused if i in in_head] + keyword.items[FUSED:]
        related: list[int] = []
        if query.offset == 0:
            everything_known = not keyword.total_is_capped and keyword.total <= len(keyword.items)
            matched = set(keyword.items)
            similar = set(semantic.items)
            related = [i for i in fused if i in similar and i not in matched]
            if not everything_known:
                related = self._without_the_words(related, query, query.limit)
            related = related[: query.limit]
        similarity = dict(zip(semantic.items, semantic.scores, strict=False))
        return SearchPage(
            items=with_words[query.offset : wanted],
            total=keyword.total,
            total_is_capped=keyword.total_is_capped,
            approximate=keyword.approximate,
            by_meaning=True,
            related=related,
            related_scores=[similarity[i] for i in related],
        )

    def _sorted(self, query: SearchQuery) -> SearchPage[int]:
        """A date or citation order of what the relevance page finds (#43: a sort orders what
        was found, it never changes it): the papers with the words in the keyword engine's
        exact order, and on the first page the same related documents as the relevance
        page's, still in relevance order, so that whoever keeps the first few of them keeps
        the same ones (the caller orders what it keeps: papers.search.paper_search).

        Where some document holds every word, the relevance page's related documents are
        the semantic ranking's without those that hold them (`_fused`: none of them has a
        keyword rank, so fusion keeps their semantic order), which needs no keyword ranking:
        at 1M papers a common phrase's took 6 ms, asking the ranked few 0.5 ms. Where none
        does, they are fused with the any-word ranking, as there."""
        page = self.keyword.search(query)
        if query.offset != 0:
            return page
        relevance = replace(query, sort="relevance")
        if not page.items:
            keyword, relaxed, semantic = self.rankings(relevance, max(FUSED, query.limit))
            if not semantic.items:
                return page  # nothing embedded, or nothing related
            found = self._fused(relevance, keyword, relaxed, semantic)
            return replace(page, related=found.related, related_scores=found.related_scores)
        # Some document holds the words: the query's words are in the archive (evidence.py).
        semantic = self.semantic.search(
            with_slice(relevance, offset=0, limit=FUSED), words_seen=lambda: True
        )
        if not semantic.items:
            return page
        related = self._without_the_words(semantic.items, relevance, relevance.limit)
        similarity = dict(zip(semantic.items, semantic.scores, strict=False))
        return replace(page, related=related, related_scores=[similarity[i] for i in related])

    def _without_the_words(self, ids: list[int], query: SearchQuery, count: int) -> list[int]:
        """The first `count` of `ids` (at most a semantic ranking's FUSED) that do not hold
        every word of the query: for when the keyword ranking read only the first of more
        matches than it holds, so that absence from it does not mean absence of the words.
        The keyword engine says which of them hold the words (a query restricted to them),
        as it would on its own page: reading their documents and matching the words here
        cost a relevance page 12% of its time at 1M papers (docs/performance.md). They are
        asked in order, twice as many as are wanted at a time, until `count` are found: the
        same first `count` as asking all of them at once (a relevance page and a date
        order's, which has no keyword ranking to leave out first, keep the same ones), where
        asking all 100 took 0.33-0.42 ms at 1M papers and the first 30 0.14-0.19 ms."""
        kept: list[int] = []
        step = max(2 * count, 1)
        for start in range(0, len(ids), step):
            batch = ids[start : start + step]
            with_words = self.keyword.matching(query, batch)
            kept.extend(i for i in batch if i not in with_words)
            if len(kept) >= count:
                break
        return kept[:count]
