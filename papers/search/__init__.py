"""Paper search: the papers collection and its selector, over whichever engine is configured
(wovepaper.lib.search). Pages, the API and the markdown variant all call `paper_search`.

- `database`: search in the database itself when no engine is configured (SQLite FTS5,
  PostgreSQL full text).
- `postgres_documents`: PostgreSQL's weighted search documents (PaperSearchDocument), built as
  a stage of their own after papers are written.
- `documents`: the papers' documents for an engine (tantivy, OpenSearch).
- `vectors`: the papers' vectors for search by meaning, read from PaperEmbedding.
- `embedding_stage`: the papers' sentence embeddings (PaperEmbedding), computed on Celery's
  `embed` queue after papers are written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date
from typing import TypedDict, Unpack

from wovepaper.lib.search import (
    Collection,
    DateField,
    IntegerField,
    KeywordField,
    Range,
    SearchBackend,
    SearchPage,
    SearchQuery,
    Sort,
    Term,
    TextField,
    backend_for,
    vector_backend_for,
)
from wovepaper.lib.search.orm import changed_id_batches, with_instances

from ..models import Paper
from ..selectors import listed as listed_papers
from .database import COUNT_CAP, fts5_query, paper_database_backend
from .documents import paper_documents, paper_id_batches
from .vectors import PAPER_VECTORS

__all__ = [
    "COUNT_CAP",
    "MODES",
    "PAPERS",
    "fts5_query",
    "paper_search",
    "paper_search_ahead",
    "paper_search_backend",
    "paper_words_held",
    "paper_words_written",
    "papers_searchable_by_meaning",
]

PAPERS = Collection(
    name="papers",
    fields=(
        # Title above abstract, as the PostgreSQL document weighs them (A over B).
        TextField("title", boost=2.0),
        TextField("abstract"),
        # The byline: a search for a person's name finds their papers (#43).
        TextField("authors"),
        KeywordField("categories"),
        DateField("published"),
        IntegerField("cited"),
    ),
    sorts={
        "relevance": Sort(None),
        "newest": Sort("published", descending=True),
        "oldest": Sort("published", descending=False),
        "cited": Sort("cited", descending=True),
    },
    documents=paper_documents,
    id_batches=paper_id_batches,
    changed_since=lambda since, size: changed_id_batches(Paper.objects.all(), since, size),
    count=Paper.objects.count,
    database=paper_database_backend,
    vectors=PAPER_VECTORS,
)


MODES = ("hybrid", "keyword", "semantic")


def paper_search_mode(mode: str) -> str:
    """The mode a paper search runs in: one it does not know is hybrid."""
    return mode if mode in MODES else "hybrid"


def paper_search_backend(mode: str = "keyword") -> SearchBackend:
    return backend_for(PAPERS, paper_search_mode(mode))


def paper_search_query(
    query: str,
    *,
    category: str | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
    sort: str = "relevance",
    offset: int = 0,
    limit: int = 20,
    any_word: bool = False,
) -> SearchQuery:
    """The interface's query for a paper search. `date_to` is exclusive. `any_word`: by
    keyword, a paper needs one of the words, not all (chat's retrieval when no paper has them
    all)."""
    filters: list[Term | Range] = []
    if category:
        filters.append(Term("categories", category))
    if date_from or date_to:
        filters.append(Range("published", gte=date_from, lt=date_to))
    return SearchQuery(
        text=(query or "").strip(),
        filters=tuple(filters),
        sort=sort if sort in PAPERS.sorts else "relevance",
        offset=offset,
        limit=limit,
        any_word=any_word,
    )


class PaperSearchTerms(TypedDict, total=False):
    """What a paper search asks beyond its text, as `paper_search_query` takes it."""

    category: str | None
    date_from: date | None
    date_to: date | None
    sort: str
    offset: int
    limit: int
    any_word: bool


def paper_search(
    query: str,
    *,
    mode: str = "hybrid",
    related_limit: Callable[[int], int] | None = None,
    listed: bool = False,
    **terms: Unpack[PaperSearchTerms],
) -> SearchPage[Paper]:
    """Ranked search over titles and abstracts, by keyword, by meaning (`semantic`) or both
    fused (`hybrid`, the default), on the terms of `paper_search_query`.
    `related_limit`: how many of a hybrid first page's related papers to keep, given how many
    papers with the words the page has (else up to `limit`). `listed`: the papers read as a
    list page reads them (papers.selectors.listed). The engines' calls, then one query for
    the papers of the page."""
    wanted = paper_search_query(query, **terms)
    if not wanted.text:
        return SearchPage()
    found = paper_search_backend(mode).search(wanted)
    if related_limit is not None and found.related:
        kept = related_limit(len(found.items))
        found = replace(
            found, related=found.related[:kept], related_scores=found.related_scores[:kept]
        )
    # The vector index learns of a deletion only when the paper is next indexed.
    rows = Paper.objects.filter(is_deleted=False)
    page = with_instances(found, listed_papers(rows) if listed else rows)
    if wanted.sort != "relevance" and page.related:
        similarity = {p.pk: s for p, s in zip(page.related, page.related_scores, strict=True)}
        related = _in_order(page.related, wanted.sort)
        page = replace(page, related=related, related_scores=[similarity[p.pk] for p in related])
    return page


_SORT_VALUE = {"newest": "published", "oldest": "published", "cited": "cited_by_count"}


def _in_order(papers: list[Paper], sort: str) -> list[Paper]:
    """Related papers, kept in relevance order, put in a date or citation order (unknown
    values last; ties keep their order of relevance)."""
    name = _SORT_VALUE.get(sort)
    if name is None:
        return papers
    known = [p for p in papers if getattr(p, name) is not None]
    known.sort(key=lambda p: getattr(p, name), reverse=sort != "oldest")
    return known + [p for p in papers if getattr(p, name) is None]


def paper_search_ahead(query: str, *, mode: str = "hybrid") -> None:
    """Start on the query's vector, which a first page by meaning will need, in another
    thread: for a caller with other work to do before `paper_search` (the search page's
    researchers and institutions), so that a query asked for the first time is encoded
    meanwhile."""
    if paper_search_mode(mode) != "keyword":
        vector_backend_for(PAPERS).vector_ahead(paper_search_query(query))


def paper_words_written(words: Sequence[str]) -> list[str]:
    """Those of `words` that some paper's title, abstract or byline holds as written (a joined
    word's parts side by side, as its own search asks): a first match of each, uncounted, no
    paper read."""
    backend = paper_search_backend()
    return [
        word
        for word in words
        if backend.search(replace(paper_search_query(word, limit=1), counted=False)).items
    ]


def paper_words_held(words: Sequence[str]) -> list[str]:
    """Those of `words` that some paper's title, abstract or byline holds, by the keyword
    engine's own analysis (its vocabulary, as search by meaning's rule asks it)."""
    if not words:
        return []
    held = paper_search_backend().words_held(list(words))
    return [word for word, is_held in zip(words, held, strict=True) if is_held]


def papers_searchable_by_meaning() -> bool:
    """Whether any paper has a vector to search by meaning (kept in the shared cache for up to
    a minute when none has: wovepaper.lib.search.vectors)."""
    return vector_backend_for(PAPERS).has_vectors()
