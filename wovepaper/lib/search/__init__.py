"""One search interface for papers, researchers and institutions, with a backend per engine.

The shape follows wagtail's modelsearch: a collection declares what is searchable (fields and
their kinds, the sorts it offers) and where its documents come from; a backend per engine
answers `search(SearchQuery) -> SearchPage[int]` (ids in order, a total and how exact it is)
and, for engines with an index of their own, keeps that index (`index`, `delete`, `rebuild`).
Each app's selector turns the ids into model instances, so pages, the API and the markdown
variant share one call whatever the engine.

Engines (settings.SEARCH_ENGINE):
- "database": the database's own full-text search, written per app and vendor: SQLite FTS5
  (the embedded default) and PostgreSQL full text (a fallback with a bounded candidate pool,
  so its ranking and counts past that pool are approximate and say so);
- "tantivy": an index on local disk (wovepaper.lib.search.tantivy), written by one indexer
  and read by every web process;
- "opensearch": a cluster through opensearch-py (wovepaper.lib.search.opensearch), the same
  documents and mappings.

Vectors and hybrid ranking plug in here. A vector backend is one more `SearchBackend`: it
embeds `query.text`, applies the same filters and returns ids in order of similarity when the
query means anything here (evidence.py: its words in the vocabulary, its nearest document
close enough), down to a floor per document (settings.SEARCH_SIMILARITY_FLOOR). Fusion
belongs in one place, a `HybridBackend(keyword, vector)` that is itself a `SearchBackend`:
for `sort == "relevance"` it asks both for their first 100 ids, scores each id by reciprocal
rank fusion, sum of weight / (k + rank) over the lists it is in (k and the weights:
hybrid.py), and answers in two parts: the documents that contain the words (the keyword
total and its flags; the first 100 in fused order, the rest in keyword order), and on the
first page `related`, those near in meaning that do not. For the date and citation sorts the
documents with the words come in the keyword backend's exact order, and the first page's
`related` are the relevance page's (a sort orders what was found, it does not change it). The
selectors and views do not change: they ask `backend_for(collection)` for a backend.
"""

from __future__ import annotations

from .base import (
    Collection,
    DateField,
    IntegerField,
    KeywordField,
    NameField,
    Range,
    SearchBackend,
    SearchPage,
    SearchQuery,
    Sort,
    Term,
    TextField,
    given_name_initials,
)
from .registry import backend_for, reset_backends, vector_backend_for

__all__ = [
    "Collection",
    "DateField",
    "IntegerField",
    "KeywordField",
    "NameField",
    "Range",
    "SearchBackend",
    "SearchPage",
    "SearchQuery",
    "Sort",
    "Term",
    "TextField",
    "backend_for",
    "given_name_initials",
    "vector_backend_for",
    "reset_backends",
]
