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

- "pgvector" (wovepaper.lib.search.pgvector): a table per collection and model with an HNSW
  index in a PostgreSQL with the extension (settings.VECTOR_DATABASE), written by the same
  one writer and searched in SQL by every web process.
- "auto" (the default): pgvector where that database has the extension, else usearch.

Filters and date or citation sorts apply to a pool of the nearest `pool_size(query)` documents
(by the collection's documents, as the engines index them): a page is exact for the pool,
and says it is `approximate` past it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from ..embeddings import (
    TextEncoder,
    query_vector,
    query_vector_ahead,
    query_vector_asked_ahead,
    text_encoder,
)
from ..mapped import populate_soon
from .base import (
    FUSED,
    Collection,
    Range,
    SearchBackend,
    SearchPage,
    SearchQuery,
    Term,
    as_one_phrase,
)
from .evidence import (
    Meaning,
    content_words,
    evidence_judged,
    means_something_here,
    nearest_looked_at,
    sense_similarity,
)

logger = logging.getLogger(__name__)

# The nearest documents a filtered or date-sorted semantic search reads at least, and at most.
POOL = 1_000
POOL_MAX = 10_000
# How many nearest documents a search by meaning reads at least, whatever its page's size: a
# query that means something only by the papers holding it is listed from those near them in
# its sense, and a semantic page counts what a hybrid page lists from (its fused depth, and one
# more for "more than").
SENSE_DEPTH = FUSED + 1
# usearch's HNSW settings: more neighbours per node and a wider search than its defaults (16,
# 128, 64) cost little at 384 dimensions and keep recall@10 >= 0.99 at 100k (benchmarks/).
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 96
# Vectors the delta holds at most before the writer merges it into a new main file: searched
# exactly by every query (~1 ms at 10,000 x 384), and rewritten whole by each batch (7 MB).
DELTA_MAX = 10_000


@dataclass(frozen=True)
class VectorSource:
    """Where a collection's vectors come from, as its app declares them.

    `vectors(ids, model)` gives (ids, rows) of those ids that have a current vector from
    `model`; an id it leaves out (deleted, not embedded yet, stale) is removed from an index.
    `batches(size, model)` walks every current vector, for a rebuild. `version(model)` changes
    whenever a vector is written (caches of neighbours are keyed by it). `present(model)`, when
    given, tells whether any current vector exists in one query (else the first batch of one
    is read). `ids(size, model, after=, newest=)`, when given, walks the stored vectors' ids in
    ranges, each as (every stored id, the current ones, the range's last id), so that an index
    can be compared with its source range by range (`wovepaper.lib.search.engine_feed.
    vectors_reconcile`).
    """

    vectors: Callable[[Sequence[int], str], tuple[list[int], np.ndarray]]
    batches: Callable[[int, str], Iterable[tuple[list[int], np.ndarray]]]
    version: Callable[[str], str]
    present: Callable[[str], bool] | None = None
    ids: Callable[..., Iterable[tuple[list[int], list[int], int]]] | None = None

    def has_any(self, model: str) -> bool:
        if self.present is not None:
            return self.present(model)
        return next(iter(self.batches(1, model)), None) is not None


# How long "this collection has no vectors from this model" is taken as known without asking
# the database again, at most (a writer forgets it at once).
ABSENCE_SECONDS = 60


def _absence_key(collection: str, model: str) -> str:
    return f"vectors-absent:{collection}:{_slug(model)}"


def vectors_written(collection: str, model: str) -> None:
    """Vectors from `model` were stored for `collection`: searches by meaning look for them
    again at once instead of taking "none yet" from the cache. Inside a transaction, again
    when it commits: a search between the write and the commit may have remembered "none"."""
    key = _absence_key(collection, model)

    def forget() -> None:
        try:
            cache.delete(key)
        except Exception:  # noqa: BLE001 (then "none yet" is believed ABSENCE_SECONDS at most)
            logger.warning("vector presence: cache unreachable, %s may wait", collection)

    forget()
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(forget)


def similarity_floor() -> float:
    """The cosine similarity below which a document is not related to a query by meaning,
    whatever the query (settings.SEARCH_SIMILARITY_FLOOR, 0.15: no nearer than chance; whether
    a query has anything related is decided for the query as a whole, evidence.py)."""
    return float(getattr(settings, "SEARCH_SIMILARITY_FLOOR", 0.15))


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


def usearch_index(dimensions: int, kind: type | None = None) -> Any:
    """An empty usearch index with this module's settings (`kind`: a subclass of usearch's
    Index, for benchmarks that time its parts)."""
    from usearch.index import Index  # imported on use: 0.3 s for processes without ANN

    return (kind or Index)(
        ndim=dimensions,
        metric="cos",
        dtype="f16",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


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
        # Which of some words any document holds (the keyword engine's `words_held`), for the
        # rule of evidence.py; the registry sets it.
        self.vocabulary: Callable[[list[str]], list[bool]] | None = None
        # Which of some documents match a query (the keyword engine's `matching`), for the
        # same rule; the registry sets it.
        self.keyword_matching: Callable[[SearchQuery, list[int]], set[int]] | None = None

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

    def built(self) -> bool:
        """Whether the writer has made this backend's index (a file, a table): until then
        searches read the source exactly, and there is nothing to compare with it."""
        return False

    def held(self, ids: Sequence[int]) -> set[int]:
        """Those of `ids` the index holds an entry for, as the writer sees it now."""
        return set()

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

    def vector_ahead(self, query: SearchQuery) -> None:
        """Start on the vector `search` will need for this query, in another thread."""
        if query.clauses() and self.has_vectors():
            query_vector_ahead(self.encoder, query.text)

    def search(
        self, query: SearchQuery, *, words_seen: Callable[[], bool] | None = None
    ) -> SearchPage[int]:
        """The documents nearest the query in meaning, if it means anything here (evidence.py).
        `words_seen`, from a caller that searches the words anyway (hybrid search), says
        whether some document holds one of them: a no settles it for an unfiltered query
        (nothing is related), while for a filtered one the vocabulary still decides (the
        caller's answers may be filtered)."""
        # A vector asked for ahead was asked for because there are vectors: not asked again.
        if not query.clauses() or not (
            query_vector_asked_ahead(self.encoder, query.text) or self.has_vectors()
        ):
            return SearchPage()
        if words_seen is not None and not query.filters and evidence_judged() and not words_seen():
            # Unfiltered, the caller's word search has said that no document holds any of the
            # words: nothing here is related whatever the similarity (evidence.py), so neither
            # the vector nor the index is waited for.
            return SearchPage()
        size = self.pool_size(query)
        vector = query_vector(self.encoder, query.text)
        # A page in order of similarity asks one more than it shows: whether more lie above
        # the floor, so that "more than" is true. (A filtered pool of 1,000 is "about" anyway,
        # and one more would take pgvector past its HNSW scan's 1,000 rows.)
        exact_end = not query.filters and query.sort == "relevance"
        # At least as many as the rule looks at for one holding the words, and as deep as a
        # query related only in their sense is listed from, whatever the page's size (an HNSW
        # or pgvector search explores about 100 candidates for any count up to that).
        wanted = max(size + 1 if exact_end else size, SENSE_DEPTH, nearest_looked_at())
        ids, distances = self.nearest(vector, wanted)
        similarity = dict(zip(ids, 1.0 - distances.astype(float), strict=True))
        # Below the floor per document nothing is related, and a document holding the words
        # there is no evidence that the query means it.
        floor = similarity_floor()
        above = [i for i in ids if similarity[i] >= floor]
        # Every document is somewhat similar to any text: whether the query means anything
        # here is judged once, on its nearest document and its words (evidence.py).
        meaning = (
            means_something_here(
                float(similarity[ids[0]]),
                lambda: self.share_of_words_held(query),
                lambda start, end: self.nearest_holding_the_query(query, above[start:end]),
            )
            if ids
            else Meaning(False)
        )
        # Of a query that means something only because some of the nearest hold it, nothing
        # but what lies near those is related (the count a semantic page shows is then of the
        # pool: "more than" when every document of it is above the floor, as more may lie
        # beyond).
        ids = above if meaning.here else []
        beyond = bool(meaning.sense) and len(ids) >= wanted
        if meaning.sense:
            ids = self.in_the_sense(ids, meaning.sense)
        pool_full = beyond or (len(ids) > size if exact_end else len(ids) >= size)
        ids = ids[:size]
        if query.filters or query.sort != "relevance":
            ids = self._filtered_and_sorted(ids, query)
        page = ids[query.offset : query.offset + query.limit]
        scores = [float(similarity[i]) for i in page] if query.sort == "relevance" else []
        # The total is the pool's above the floor, "about" (an approximate index).
        return SearchPage(
            items=page,
            total=len(ids),
            total_is_capped=pool_full,
            approximate=True,
            by_meaning=True,
            scores=scores,
        )

    def share_of_words_held(self, query: SearchQuery) -> float:
        """The share of the query's content words (evidence.content_words) that some document
        of the collection holds, whatever the filters: `vocabulary` (the collection's keyword
        engine, set by the registry) says which. 0 for a query of stop words alone; without a
        vocabulary, the words are taken as held and the similarity alone decides."""
        words = content_words(query.text)
        if not words:
            return 0.0
        if self.vocabulary is None:
            return 1.0
        return sum(self.vocabulary(words)) / len(words)

    def nearest_holding_the_query(self, query: SearchQuery, nearest: list[int]) -> list[int]:
        """Those of the `nearest` documents that hold the query as written (its words, in their
        order, as one phrase), whatever its filters, nearest first, as `keyword_matching`
        (the keyword engine's `matching`, set by the registry) says; none without it."""
        if self.keyword_matching is None or not nearest:
            return []
        phrase = SearchQuery(text=as_one_phrase(query.text), limit=len(nearest))
        holding = self.keyword_matching(phrase, nearest)
        return [i for i in nearest if i in holding]

    def vectors_of(self, ids: list[int]) -> dict[int, np.ndarray]:
        """The vectors of those of `ids` that have a current one, as float32 rows: here read
        from the source; an index that holds them answers from memory."""
        found, rows = self.source.vectors(ids, self.encoder.name)
        return dict(zip(found, np.asarray(rows, dtype=np.float32), strict=True))

    def nearness_to(self, ids: list[int], sense: Sequence[int]) -> dict[int, float]:
        """Each of `ids` that has a vector, with its greatest cosine similarity to one of the
        `sense` documents (empty when none of those has one)."""
        row = self.vectors_of(list(dict.fromkeys([*sense, *ids])))
        anchors = [row[i] for i in sense if i in row]
        candidates = [i for i in ids if i in row]
        if not anchors or not candidates:
            return {}
        # einsum, not `@`: no BLAS threads for a product this small (see `nearest`).
        nearest_anchor = np.einsum(
            "ij,kj->ik", np.stack([row[i] for i in candidates]), np.stack(anchors)
        ).max(axis=1)
        return dict(zip(candidates, nearest_anchor.astype(float).tolist(), strict=True))

    def in_the_sense(self, ids: list[int], sense: Sequence[int]) -> list[int]:
        """Those of `ids`, in order, whose cosine similarity to one of the `sense` documents
        is at least evidence.sense_similarity() (the sense documents themselves are kept)."""
        nearness = self.nearness_to(ids, sense)
        least = sense_similarity()
        return [i for i in ids if nearness.get(i, -1.0) >= least]

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
        # "None yet" is remembered for a while in the shared cache: hybrid search asks on every
        # query, and a database with no vectors (a new deployment, a bulk import not yet
        # embedded) would pay a query each time. Writers forget it (`vectors_written`).
        key = _absence_key(self.collection.name, self.encoder.name)
        try:
            if cache.get(key):
                return False
        except Exception:  # noqa: BLE001 (any cache backend's error: ask the database)
            logger.warning("vector presence: cache unreachable")
        present = self.source.has_any(self.encoder.name)
        if not present:
            try:
                cache.set(key, True, ABSENCE_SECONDS)
            except Exception:  # noqa: BLE001 (only not remembered)
                logger.warning("vector presence: cache unreachable")
        return present

    def nearest(self, vector: np.ndarray, count: int) -> tuple[list[int], np.ndarray]:
        best_ids: list[int] = []
        best: np.ndarray = np.zeros(0, dtype=np.float32)
        vector = np.asarray(vector, dtype=np.float32)
        for ids, rows in self.source.batches(20_000, self.encoder.name):
            # einsum, not `@`, as for the usearch backend's delta: BLAS's threads took 27.9 ms
            # (p50) for a batch of 20,000 rows against einsum's 12.2 ms on the loaded 2-core
            # machine (benchmarks/semantic.py product).
            similarity = np.einsum("ij,j->i", rows, vector)
            best_ids = best_ids + list(ids)
            best = np.concatenate([best, similarity])
            if len(best_ids) > count * 4:
                keep = np.argsort(-best, kind="stable")[:count]
                best_ids, best = [best_ids[k] for k in keep], best[keep]
        order = np.argsort(-best, kind="stable")[:count]
        return [best_ids[k] for k in order], 1.0 - best[order]


@dataclass(frozen=True)
class _Generation:
    """What a reader maps at once, as one manifest names it: the main HNSW file, the keys of
    its entries that are stale (removed, or replaced by the delta), and the delta's vectors
    written since the main file was built (searched exactly)."""

    stamp: tuple[int, int]
    version: str
    main: Any  # a usearch Index viewing the main file
    hidden: np.ndarray  # uint64, sorted
    delta_ids: np.ndarray  # uint64
    delta_rows: np.ndarray  # float32, unit rows

    def __len__(self) -> int:
        return len(self.main) - len(self.hidden) + len(self.delta_ids)


EMPTY_KEYS = np.zeros(0, dtype=np.uint64)


class UsearchBackend(VectorBackend):
    """An HNSW index per collection and model, in files under `directory` named by a manifest
    (`<collection>-<model>.json`, replaced atomically):

    - the main file, an HNSW index built whole (`rebuild`) or by a merge, memory-mapped by
      readers and never written again once named;
    - a delta file of what one writer (`index`) changed since: new and replaced vectors, and
      the keys of the main file's entries that are stale. Each batch writes a new small delta
      file and a new manifest; the main file is untouched, so a batch costs the delta's size,
      not the index's (2 GB at all of arXiv). Readers search the main file (stale keys left
      out) and the delta (exactly, in numpy) and take the nearest of both;
    - `merge` (Celery beat, and the writer itself once the delta holds `delta_max` vectors)
      folds the delta into a new main file and names it with an empty delta.

    Readers map whatever the manifest names when the manifest changes (its inode and mtime),
    so they switch to a new generation whole: never a main file with another's delta.
    """

    engine = "usearch"

    def __init__(
        self,
        collection: Collection,
        source: VectorSource,
        *,
        directory: Path,
        encoder: TextEncoder | None = None,
        delta_max: int = DELTA_MAX,
    ) -> None:
        super().__init__(collection, source, encoder)
        self.directory = Path(directory)
        self.delta_max = delta_max
        self._lock = threading.Lock()
        self._generation: _Generation | None = None
        self._writer_main: tuple[str, Any] | None = None
        self._fallback = ExactVectorBackend(collection, source, encoder)

    @property
    def base(self) -> str:
        return f"{self.collection.name}-{_slug(self.encoder.name)}"

    @property
    def manifest(self) -> Path:
        return self.directory / f"{self.base}.json"

    def main_path(self) -> Path | None:
        """The main file the manifest names now (None before the first build)."""
        named = self._read_manifest()
        return None if named is None else self.directory / named["main"]

    def delta_path(self) -> Path | None:
        named = self._read_manifest()
        if named is None or not named.get("delta"):
            return None
        return self.directory / named["delta"]

    def _new_index(self):
        return usearch_index(self.encoder.dimensions)

    @property
    def _legacy(self) -> Path:
        """The one index file of the version before manifests, rewritten whole by each batch:
        taken as the main file until a manifest names another."""
        return self.directory / f"{self.base}.usearch"

    def _stamp(self) -> tuple[int, int] | None:
        for path in (self.manifest, self._legacy):
            try:
                stat = os.stat(path)
            except FileNotFoundError:
                continue
            return stat.st_ino, stat.st_mtime_ns
        return None

    def _read_manifest(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.manifest.read_text())
        except FileNotFoundError:
            pass
        try:
            built = os.stat(self._legacy).st_mtime_ns
        except FileNotFoundError:
            return None
        return {"main": self._legacy.name, "delta": None, "build": f"{built:x}", "serial": 0}

    def _open(self, stamp: tuple[int, int]) -> _Generation:
        named = self._read_manifest()
        if named is None:
            raise FileNotFoundError(self.manifest)
        main_file = self.directory / named["main"]
        if not main_file.exists():
            raise FileNotFoundError(main_file)
        main = self._new_index()
        main.view(str(main_file))
        # Mapped in whole beside the searches (a worker's warm-up waits for it), so that the
        # searches after this one wait on no page fault in it (wovepaper.lib.mapped).
        populate_soon(main_file)
        hidden, delta_ids, delta_rows = EMPTY_KEYS, EMPTY_KEYS, np.zeros((0, 0), np.float32)
        if named.get("delta"):
            with np.load(self.directory / named["delta"], allow_pickle=False) as delta:
                hidden = delta["hidden"].astype(np.uint64)
                delta_ids = delta["ids"].astype(np.uint64)
                delta_rows = delta["rows"].astype(np.float32)
        version = f"{named['build']}-{named['serial']}"
        return _Generation(stamp, version, main, hidden, delta_ids, delta_rows)

    def _current(self) -> _Generation | None:
        """The generation the manifest names now, mapped (None when there is no index yet)."""
        for _attempt in range(3):
            stamp = self._stamp()
            generation = self._generation
            if generation is not None and generation.stamp == stamp:
                return generation
            if stamp is None:
                self._generation = None
                return None
            with self._lock:
                try:
                    self._generation = self._open(stamp)
                except FileNotFoundError:
                    # A merge replaced the manifest and removed the files it named between
                    # our reading it and opening them: read the new one.
                    continue
            return self._generation
        raise RuntimeError(f"the vector index at {self.manifest} keeps changing under a reader")

    def version(self) -> str:
        generation = self._current()
        return self._fallback.version() if generation is None else generation.version

    def has_vectors(self) -> bool:
        generation = self._current()
        return self._fallback.has_vectors() if generation is None else len(generation) > 0

    def size(self) -> int:
        """How many vectors a search reads now (0 before the first batch is written)."""
        generation = self._current()
        return 0 if generation is None else len(generation)

    def nearest(self, vector: np.ndarray, count: int) -> tuple[list[int], np.ndarray]:
        generation = self._current()
        if generation is None:
            logger.warning("no vector index at %s yet: searching exactly", self.manifest)
            return self._fallback.nearest(vector, count)
        if count <= 0:
            return [], np.zeros(0, dtype=np.float32)
        vector = np.asarray(vector, dtype=np.float32)
        keys, distances = self._nearest_in_main(generation, vector, count)
        if len(generation.delta_ids):
            # einsum, not `@`: BLAS's threads make a matrix-vector product of 10,000 rows take
            # 24 ms on a loaded 2-core machine, against 0.6 ms in einsum's own loop.
            similarity = np.einsum("ij,j->i", generation.delta_rows, vector)
            best = np.argsort(-similarity, kind="stable")[:count]
            keys = np.concatenate([keys, generation.delta_ids[best]])
            distances = np.concatenate([distances, 1.0 - similarity[best]])
        order = np.argsort(distances, kind="stable")[:count]
        return [int(k) for k in keys[order]], distances[order].astype(np.float32)

    def vectors_of(self, ids: list[int]) -> dict[int, np.ndarray]:
        """From the mapped index (the delta's rows, else the main file's entry): reading 101
        rows from PostgreSQL took 3-10 ms at 1M papers, more on a cold cache."""
        generation = self._current()
        if generation is None:
            return super().vectors_of(ids)
        keys = np.asarray(ids, dtype=np.uint64)
        found: dict[int, np.ndarray] = {}
        if len(generation.delta_ids):
            in_delta = np.nonzero(np.isin(generation.delta_ids, keys))[0]
            found.update((int(generation.delta_ids[n]), generation.delta_rows[n]) for n in in_delta)
        rest = [int(k) for k in keys[~np.isin(keys, generation.hidden)] if int(k) not in found]
        if rest:
            rows = generation.main.get(np.asarray(rest, dtype=np.uint64), dtype=np.float32)
            for key, row in zip(rest, rows, strict=True):
                if row is not None:
                    found[int(key)] = np.asarray(row, dtype=np.float32)
        return found

    @staticmethod
    def _nearest_in_main(
        generation: _Generation, vector: np.ndarray, count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        main, hidden = generation.main, generation.hidden
        size = len(main)
        wanted = min(count + min(len(hidden), count), size)
        while wanted > 0:
            matches = main.search(vector, wanted)
            keys = np.asarray(matches.keys, dtype=np.uint64).reshape(-1)
            distances = np.asarray(matches.distances, dtype=np.float32).reshape(-1)
            kept = ~np.isin(keys, hidden) if len(hidden) else np.ones(len(keys), dtype=bool)
            # Enough live entries, or nothing more to read: else read deeper past stale ones.
            if kept.sum() >= count or wanted >= size:
                return keys[kept][:count], distances[kept][:count]
            wanted = min(wanted * 4, size)
        return EMPTY_KEYS, np.zeros(0, dtype=np.float32)

    # --- the writer's side (one process: the `search` queue's worker, or a command) ------------

    def index(self, ids: Sequence[int]) -> int:
        """Make these ids' vectors current (add, replace, or remove): in a new delta file,
        the main file untouched; merged into it once the delta holds `delta_max` vectors and
        stale keys."""
        if not ids:
            return 0
        with self._lock:
            named = self._read_manifest()
            if named is None:
                named = self._write_main(self._new_index(), serial=0)
            main = self._main_for_writer(named["main"])
            hidden, delta_ids, delta_rows = self._delta(named)
            keys = np.unique(np.asarray(list(ids), dtype=np.uint64))
            in_main = keys[np.asarray(main.contains(keys), dtype=bool).reshape(-1)]
            hidden = np.union1d(hidden, in_main).astype(np.uint64)
            kept = ~np.isin(delta_ids, keys)
            delta_ids, delta_rows = delta_ids[kept], delta_rows[kept]
            found, rows = self.source.vectors(list(ids), self.encoder.name)
            if found:
                delta_ids = np.concatenate([delta_ids, np.asarray(found, dtype=np.uint64)])
                rows = np.asarray(rows, dtype=np.float16).reshape(len(found), -1)
                delta_rows = rows if not len(delta_rows) else np.concatenate([delta_rows, rows])
            self._write_delta(named, hidden, delta_ids, delta_rows)
            self._generation = None
        # Stale keys count too: each makes every search read one entry of the main file more.
        if len(delta_ids) + len(hidden) >= self.delta_max:
            self.merge()
        return len(found)

    def built(self) -> bool:
        return self._read_manifest() is not None

    def held(self, ids: Sequence[int]) -> set[int]:
        """Ids with an entry in the main file that the delta does not hide, or in the delta."""
        if not ids:
            return set()
        with self._lock:
            named = self._read_manifest()
            if named is None:
                return set()
            main = self._main_for_writer(named["main"])
            hidden, delta_ids, _ = self._delta(named)
        keys = np.unique(np.asarray(list(ids), dtype=np.uint64))
        in_main = keys[np.asarray(main.contains(keys), dtype=bool).reshape(-1)]
        live = np.setdiff1d(in_main, hidden, assume_unique=True)
        return {int(k) for k in np.union1d(live, np.intersect1d(keys, delta_ids))}

    def _main_for_writer(self, name: str):
        """The main file mapped, to ask which keys it holds: kept between batches, since
        mapping a large file costs more than a batch."""
        if self._writer_main is None or self._writer_main[0] != name:
            main = self._new_index()
            main.view(str(self.directory / name))
            self._writer_main = (name, main)
        return self._writer_main[1]

    def _delta(self, named: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not named.get("delta"):
            return EMPTY_KEYS, EMPTY_KEYS, np.zeros((0, self.encoder.dimensions), np.float16)
        with np.load(self.directory / named["delta"], allow_pickle=False) as delta:
            return (
                delta["hidden"].astype(np.uint64),
                delta["ids"].astype(np.uint64),
                delta["rows"].astype(np.float16),
            )

    def merge(self) -> int:
        """Fold the delta into a new main file (stale entries removed, the delta's added), and
        name it with no delta; returns how many vectors the delta held. Readers keep the old
        generation until they see the new manifest."""
        with self._lock:
            named = self._read_manifest()
            if named is None or not named.get("delta"):
                return 0
            hidden, delta_ids, delta_rows = self._delta(named)
            index = self._new_index()
            index.load(str(self.directory / named["main"]))
            if len(hidden):
                present = hidden[np.asarray(index.contains(hidden), dtype=bool).reshape(-1)]
                if len(present):
                    index.remove(present)
            if len(delta_ids):
                index.add(delta_ids, delta_rows.astype(np.float32))
            self._write_main(index, serial=named["serial"] + 1)
            self._generation = None
        return len(delta_ids)

    def rebuild(self, *, progress: Callable[[int], None] | None = None) -> int:
        """A new index from every current vector in the database, replacing the old one at
        once (readers keep the previous generation until it is named)."""
        index = self._new_index()
        count = 0
        for ids, rows in self.source.batches(10_000, self.encoder.name):
            index.add(np.asarray(ids, dtype=np.uint64), rows)
            count += len(ids)
            if progress:
                progress(len(ids))
        with self._lock:
            previous = self._read_manifest()
            self._write_main(index, serial=(previous or {}).get("serial", -1) + 1)
            self._generation = None
        return count

    def _write_main(self, index, *, serial: int) -> dict[str, Any]:
        self.directory.mkdir(parents=True, exist_ok=True)
        build = f"{time.time_ns():x}"
        name = f"{self.base}.{build}.usearch"
        partial = self.directory / f"{name}.{os.getpid()}.partial"
        index.save(str(partial))
        os.replace(partial, self.directory / name)
        return self._name({"main": name, "delta": None, "build": build, "serial": serial})

    def _write_delta(
        self, named: dict[str, Any], hidden: np.ndarray, ids: np.ndarray, rows: np.ndarray
    ) -> dict[str, Any]:
        serial = named["serial"] + 1
        name = f"{self.base}.{named['build']}.{serial}.delta.npz"
        partial = self.directory / f"{name}.{os.getpid()}.partial"
        with open(partial, "wb") as out:
            np.savez(out, hidden=hidden, ids=ids, rows=rows)
        os.replace(partial, self.directory / name)
        return self._name({**named, "delta": name, "serial": serial})

    def _name(self, named: dict[str, Any]) -> dict[str, Any]:
        """Make `named` the current generation (the manifest replaced in one rename), then
        remove the files no manifest names any more: a reader that mapped them keeps them
        until it lets go (POSIX), and one that read the old manifest but had not opened its
        files yet reads the new one (`_current`)."""
        partial = self.manifest.with_name(f"{self.manifest.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps(named))
        os.replace(partial, self.manifest)
        keep = {named["main"], named.get("delta"), self.manifest.name}
        for path in self.directory.glob(f"{self.base}.*"):
            if path.name not in keep and not path.name.endswith(".partial"):
                path.unlink(missing_ok=True)
        return named

    def close(self) -> None:
        self._generation = self._writer_main = None
