"""Search by meaning: a collection's vectors (kept in the database), ranked by cosine similarity
to the embedded query text, behind the same `SearchBackend` interface as the keyword engines.

Backends (settings.VECTOR_ENGINE):
- "usearch": an HNSW index (usearch, float16) built from the database's vectors, saved to one
  file per collection and model under VECTOR_INDEX_DIR, updated incrementally by one writer
  (the `search` queue's worker, through `vector_index_enqueue`) and memory-mapped by every web
  process, which maps the new file when the writer replaces it. Until a file exists (a new
  deployment, a new model) searches fall back to the exact backend.
- "exact": every vector of the collection compared with the query in numpy: exact, linear in
  the collection's size; the reference the ANN index is measured against, and enough for the
  embedded default's few thousand papers.

PostgreSQL's pgvector would be a third backend where the extension is installed; it is not
written yet (Debian 12's repository has no package of it), so PostgreSQL deployments use
"usearch" over the vectors in their database.

Filters and date or citation sorts apply to a pool of the nearest `pool_size(query)` documents
(by the collection's documents, as the engines index them): a page is exact for the pool,
and says it is `approximate` past it.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..embeddings import TextEncoder, text_encoder
from .base import Collection, Range, SearchBackend, SearchPage, SearchQuery, Term

logger = logging.getLogger(__name__)

# The nearest documents a filtered or date-sorted semantic search reads at least, and at most.
POOL = 1_000
POOL_MAX = 10_000
# usearch's HNSW settings: more neighbours per node and a wider search than its defaults (16,
# 128, 64) cost little at 384 dimensions and keep recall@10 >= 0.99 at 100k (benchmarks/).
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 96


@dataclass(frozen=True)
class VectorSource:
    """Where a collection's vectors come from, as its app declares them.

    `vectors(ids, model)` gives (ids, rows) of those ids that have a current vector from
    `model`; an id it leaves out (deleted, not embedded yet, stale) is removed from an index.
    `batches(size, model)` walks every current vector, for a rebuild. `version(model)` changes
    whenever a vector is written (caches of neighbours are keyed by it).
    """

    vectors: Callable[[Sequence[int], str], tuple[list[int], np.ndarray]]
    batches: Callable[[int, str], Iterable[tuple[list[int], np.ndarray]]]
    version: Callable[[str], str]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def _matches(document: dict[str, Any], condition: Term | Range) -> bool:
    value = document.get(condition.field)
    if isinstance(condition, Term):
        values = value if isinstance(value, list | tuple | set) else [value]
        return condition.value in values
    if value is None:
        return False
    if hasattr(value, "date") and not hasattr(condition.gte or condition.lt, "hour"):
        value = value.date()
    if condition.gte is not None and value < condition.gte:
        return False
    return not (condition.lt is not None and value >= condition.lt)


class VectorBackend(SearchBackend):
    """What the vector backends share: embedding the query, and turning the nearest documents
    into the query's page (filters, sorts and slice)."""

    engine = "vector"

    def __init__(
        self, collection: Collection, source: VectorSource, encoder: TextEncoder | None = None
    ) -> None:
        super().__init__(collection)
        self.source = source
        self._encoder = encoder

    @property
    def encoder(self) -> TextEncoder:
        return self._encoder or text_encoder()

    def nearest(self, vector: np.ndarray, count: int) -> tuple[list[int], np.ndarray]:
        """The ids of the `count` nearest vectors, nearest first, and their cosine distances."""
        raise NotImplementedError

    def version(self) -> str:
        """Changes whenever what this backend searches changes."""
        return self.source.version(self.encoder.name)

    def has_vectors(self) -> bool:
        """Whether there is anything to search: without it a search answers at once, without
        loading the model to embed the query."""
        raise NotImplementedError

    def similar_to(self, document_id: int, count: int) -> list[tuple[int, float]]:
        """The documents nearest to this one's own vector (itself left out), with their cosine
        similarity; [] when it has no vector yet."""
        ids, rows = self.source.vectors([document_id], self.encoder.name)
        if not ids:
            return []
        return self.similar_to_vector(rows[0], count, exclude={document_id})

    def similar_to_vector(
        self, vector: np.ndarray, count: int, *, exclude: set[int] | frozenset = frozenset()
    ) -> list[tuple[int, float]]:
        ids, distances = self.nearest(vector, count + len(exclude))
        found = [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]
        return [pair for pair in found if pair[0] not in exclude][:count]

    def pool_size(self, query: SearchQuery) -> int:
        wanted = query.offset + query.limit
        if not query.filters and query.sort == "relevance":
            return wanted
        return min(max(POOL, wanted * 5), POOL_MAX)

    def search(self, query: SearchQuery) -> SearchPage[int]:
        if not query.clauses() or not self.has_vectors():
            return SearchPage()
        size = self.pool_size(query)
        vector = self.encoder.encode([query.text])[0]
        ids, _ = self.nearest(vector, size)
        pool_full = len(ids) >= size
        if query.filters or query.sort != "relevance":
            ids = self._filtered_and_sorted(ids, query)
        page = ids[query.offset : query.offset + query.limit]
        # Every document is somewhat similar to any text: the total is the pool's, "about".
        return SearchPage(
            items=page,
            total=len(ids),
            total_is_capped=pool_full,
            approximate=True,
            by_meaning=True,
        )

    def _filtered_and_sorted(self, ids: list[int], query: SearchQuery) -> list[int]:
        documents = {d["id"]: d for d in self.collection.documents(ids)}
        kept = [
            i
            for i in ids
            if i in documents and all(_matches(documents[i], f) for f in query.filters)
        ]
        sort = self.collection.sort_for(query.sort)
        field = sort.field
        if field is None:
            return kept
        known = [i for i in kept if documents[i].get(field) is not None]
        unknown = [i for i in kept if documents[i].get(field) is None]
        # Stable: documents that tie keep their order of similarity.
        known.sort(key=lambda i: documents[i][field], reverse=sort.descending)
        return known + unknown


class ExactVectorBackend(VectorBackend):
    """Every current vector against the query: exact, and linear in the collection's size."""

    engine = "exact"

    def has_vectors(self) -> bool:
        return next(iter(self.source.batches(1, self.encoder.name)), None) is not None

    def nearest(self, vector: np.ndarray, count: int) -> tuple[list[int], np.ndarray]:
        best_ids: list[int] = []
        best: np.ndarray = np.zeros(0, dtype=np.float32)
        for ids, rows in self.source.batches(20_000, self.encoder.name):
            similarity = rows @ vector
            best_ids = best_ids + list(ids)
            best = np.concatenate([best, similarity])
            if len(best_ids) > count * 4:
                keep = np.argsort(-best, kind="stable")[:count]
                best_ids, best = [best_ids[k] for k in keep], best[keep]
        order = np.argsort(-best, kind="stable")[:count]
        return [best_ids[k] for k in order], 1.0 - best[order]


class UsearchBackend(VectorBackend):
    """An HNSW index in one file per collection and model: written by one process (`index`,
    `rebuild`), memory-mapped read-only by the others and mapped anew when the file changes."""

    engine = "usearch"

    def __init__(
        self,
        collection: Collection,
        source: VectorSource,
        *,
        directory: Path,
        encoder: TextEncoder | None = None,
    ) -> None:
        super().__init__(collection, source, encoder)
        self.directory = Path(directory)
        self._lock = threading.Lock()
        self._view: Any = None
        self._view_stamp: tuple[int, int] | None = None
        self._writer: Any = None
        self._fallback = ExactVectorBackend(collection, source, encoder)

    @property
    def path(self) -> Path:
        return self.directory / f"{self.collection.name}-{_slug(self.encoder.name)}.usearch"

    def _new_index(self):
        from usearch.index import Index  # imported on use: 0.3 s for processes without ANN

        return Index(
            ndim=self.encoder.dimensions,
            metric="cos",
            dtype="f16",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )

    def _stamp(self) -> tuple[int, int] | None:
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return None
        return stat.st_ino, stat.st_mtime_ns

    def _reader(self):
        """The memory-mapped index as the writer last saved it (None when there is none)."""
        stamp = self._stamp()
        if stamp != self._view_stamp:
            with self._lock:
                if stamp != self._view_stamp:
                    view = None
                    if stamp is not None:
                        view = self._new_index()
                        view.view(str(self.path))
                    self._view, self._view_stamp = view, stamp
        return self._view

    def version(self) -> str:
        stamp = self._stamp()
        return self._fallback.version() if stamp is None else f"{stamp[0]}-{stamp[1]}"

    def has_vectors(self) -> bool:
        index = self._reader()
        return self._fallback.has_vectors() if index is None else len(index) > 0

    def nearest(self, vector: np.ndarray, count: int) -> tuple[list[int], np.ndarray]:
        index = self._reader()
        if index is None:
            logger.warning("no vector index at %s yet: searching exactly", self.path)
            return self._fallback.nearest(vector, count)
        if count <= 0 or len(index) == 0:
            return [], np.zeros(0, dtype=np.float32)
        matches = index.search(np.asarray(vector, dtype=np.float32), count)
        return [int(k) for k in matches.keys], np.asarray(matches.distances, dtype=np.float32)

    # --- the writer's side (one process: the `search` queue's worker, or a command) ------------

    def _writable(self):
        if self._writer is None or self._writer_stamp != self._stamp():
            index = self._new_index()
            if self.path.exists():
                index.load(str(self.path))
            self._writer = index
        return self._writer

    _writer_stamp: tuple[int, int] | None = None

    def _save(self, index) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(f".{os.getpid()}.partial")
        index.save(str(partial))
        # Readers keep the file they mapped until they see the new one: never half a file.
        os.replace(partial, self.path)
        self._writer_stamp = self._stamp()

    def index(self, ids: Sequence[int]) -> int:
        """Make these ids' vectors current in the index (add, replace, or remove)."""
        if not ids:
            return 0
        with self._lock:
            index = self._writable()
            keys = np.asarray(list(ids), dtype=np.uint64)
            present = keys[np.asarray(index.contains(keys), dtype=bool).reshape(-1)]
            if len(present):
                index.remove(present)
            found, rows = self.source.vectors(list(ids), self.encoder.name)
            if found:
                index.add(np.asarray(found, dtype=np.uint64), rows)
            self._save(index)
        return len(found)

    def rebuild(self, *, progress: Callable[[int], None] | None = None) -> int:
        """A new index from every current vector in the database, replacing the file at once."""
        index = self._new_index()
        count = 0
        for ids, rows in self.source.batches(10_000, self.encoder.name):
            index.add(np.asarray(ids, dtype=np.uint64), rows)
            count += len(ids)
            if progress:
                progress(len(ids))
        with self._lock:
            self._save(index)
            self._writer = index
        return count

    def close(self) -> None:
        self._view = self._writer = None
        self._view_stamp = self._writer_stamp = None
