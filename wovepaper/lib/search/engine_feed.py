"""Feeding an engine's index: after a write commits, its ids go to one Celery task
(`search.index_engine`, queue `search`, served by one worker process: tantivy allows one
writer per index). With the database engine there is nothing to feed: the database keeps its
own index.

The feeds: harvest pages and snapshot import batches (papers.harvest.runs, papers.ingest.importing),
a paper saved one at a time (the admin), matching batches (citation counts: papers; new
researchers and institutions and their paper counts), curation (merges and splits change
which researcher records exist and their counts), all through `engine_index_enqueue`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from django.utils.module_loading import import_string

from ..queueing import send_after_commit, send_now
from .base import Collection
from .registry import backend_for, vector_backend_for

logger = logging.getLogger(__name__)

# Ids per task message: one tantivy commit or one OpenSearch bulk request each.
TASK_CHUNK = 1_000
# A record's modified_at is taken inside its write's transaction, which may commit after a
# catch-up round has begun: each round looks back this much before the previous one's start.
CATCH_UP_OVERLAP = timedelta(minutes=10)


def engine_configured() -> bool:
    return getattr(settings, "SEARCH_ENGINE", "database") != "database"


def collection_named(name: str) -> Collection:
    """A collection by name, from settings.SEARCH_COLLECTIONS (name -> dotted path)."""
    return import_string(settings.SEARCH_COLLECTIONS[name])


# How an index write is retried: tantivy's lock held by another writer, or a cluster away,
# passes within seconds.
RETRIED_WRITE: dict[str, Any] = {
    "acks_late": True,
    "autoretry_for": (Exception,),
    "retry_backoff": 5,
    "max_retries": 5,
}


@shared_task(name="search.index_engine", **RETRIED_WRITE)
def index_engine(collection: str, ids: list[int]) -> int:
    """Make the engine's documents of these ids current (or remove them). Idempotent; retried
    when the index is busy (another writer holds tantivy's lock) or the cluster is away."""
    return backend_for(collection_named(collection)).index(ids)


@shared_task(name="search.index_vectors", **RETRIED_WRITE)
def index_vectors(collection: str, ids: list[int]) -> int:
    """Make the vector index's entries of these ids current (add, replace or remove them).
    On the `search` queue too: one process writes each index file."""
    return backend_for(collection_named(collection), "semantic").index(ids)


@shared_task(name="search.merge_vectors", acks_late=True)
def merge_vectors_task() -> dict[str, int]:
    """Celery beat, on the search queue (the vector index's one writer): fold each collection's
    delta of new and changed vectors into a new main index file."""
    return merge_vectors()


def merge_vectors() -> dict[str, int]:
    """Merge every collection's vector delta; returns how many vectors each delta held."""
    if not vector_index_configured():
        return {}
    merged = {}
    for name in settings.SEARCH_COLLECTIONS:
        collection = collection_named(name)
        if collection.vectors is None:
            continue
        backend = backend_for(collection, "semantic")
        merged[name] = backend.merge() if hasattr(backend, "merge") else 0
        if merged[name]:
            logger.info("vector index: merged %d %s vector(s)", merged[name], name)
    return merged


@shared_task(name="search.engine_catch_up", acks_late=True)
def engine_catch_up_task() -> dict[str, int]:
    """Celery beat, on the search queue (the one writer): `engine_catch_up` for every collection."""
    return {name: engine_catch_up(collection_named(name)) for name in settings.SEARCH_COLLECTIONS}


def engine_catch_up(collection: Collection) -> int:
    """Make the engine's documents of every record changed since the last round current: what
    a lost message or a stopped indexer left behind. Returns how many documents were written.
    Idempotent; the mark moves only when the round has finished."""
    if not engine_configured() or collection.changed_since is None:
        return 0
    started = timezone.now()
    mark = caught_up_at(collection)
    if mark is None:
        since = started - timedelta(hours=settings.SEARCH_CATCH_UP_FIRST_HOURS)
    else:
        since = mark - CATCH_UP_OVERLAP
    backend = backend_for(collection)
    written = 0
    for ids in collection.changed_since(since, TASK_CHUNK):
        written += backend.index(ids)
    record_caught_up(collection, started)
    if written:
        logger.info("search catch-up: %d %s document(s) since %s", written, collection.name, since)
    return written


def _mark_path(collection: Collection) -> Path:
    # Beside the index the mark describes: a new index directory starts without one.
    return (
        Path(settings.SEARCH_INDEX_DIR) / "catch-up" / f"{settings.SEARCH_ENGINE}-{collection.name}"
    )


def caught_up_at(collection: Collection) -> datetime | None:
    """When the last finished catch-up round (or rebuild) of this collection began."""
    try:
        return datetime.fromisoformat(_mark_path(collection).read_text().strip())
    except (OSError, ValueError):
        return None


def record_caught_up(collection: Collection, started: datetime) -> None:
    """Everything changed before `started` is in the engine (a round or a rebuild began then)."""
    path = _mark_path(collection)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial_path = path.with_suffix(".partial")
    partial_path.write_text(started.isoformat())
    partial_path.replace(path)  # atomic: a reader sees the old mark or the new one


def vector_index_configured() -> bool:
    """Whether a vector index (usearch's files, pgvector's table) is written: every engine but
    "exact", which reads the source alone. "auto" is always one of the two."""
    return getattr(settings, "VECTOR_ENGINE", "auto") != "exact"


@dataclass
class VectorsReconciled:
    """One comparison of a vector index with its source: stored vectors examined, current ones
    the index lacks (`missing`), entries it holds of vectors no longer current (`extra`: a
    deleted paper, a changed text), how many of those were written again (`repaired`, here or
    queued for the writer) and the last id examined (None when the walk reached the end)."""

    examined: int = 0
    missing: int = 0
    extra: int = 0
    repaired: int = 0
    last: int | None = None

    def add(self, other: VectorsReconciled) -> None:
        self.examined += other.examined
        self.missing += other.missing
        self.extra += other.extra
        self.repaired += other.repaired

    def __str__(self) -> str:
        return (
            f"{self.examined} stored vectors examined, {self.missing} missing from the index, "
            f"{self.extra} there without a current vector; {self.repaired} repaired"
        )


def vectors_reconcile(
    collection: Collection,
    *,
    after: int = 0,
    newest: int = 0,
    limit: int | None = None,
    repair: Callable[[list[int]], object] | None = None,
) -> VectorsReconciled | None:
    """Compare the vector index of `collection` with its source, range by range of
    VECTOR_RECONCILE_RANGE stored ids past `after` (or the `newest` ones), at most about
    `limit` of them, and make the index's entries current where they differ: by writing them
    here (the writer's process: the `search` worker's sweep), or through `repair` (ids; a
    command queues them for that writer). None when there is no index to compare (the exact
    engine, or no file or table written yet: searches read the source itself)."""
    source = collection.vectors
    if not vector_index_configured() or source is None or source.ids is None:
        return None
    backend = vector_backend_for(collection)
    if not backend.built():
        return None
    model = backend.encoder.name
    fix = repair or backend.index
    seen = VectorsReconciled()
    for stored, current, last in source.ids(
        settings.VECTOR_RECONCILE_RANGE, model, after=after, newest=newest
    ):
        held = backend.held(stored)
        missing = set(current) - held
        extra = held - set(current)
        wrong = sorted(missing | extra)
        for start in range(0, len(wrong), TASK_CHUNK):
            fix(wrong[start : start + TASK_CHUNK])
        seen.add(VectorsReconciled(len(stored), len(missing), len(extra), len(wrong)))
        seen.last = last
        if limit is not None and seen.examined >= limit:
            return seen
    seen.last = None
    return seen


@dataclass
class EngineReconciled:
    """One comparison of a keyword engine's index with its source: records examined, those the
    index holds no document of (`missing`: a lost message; a record that should not be
    searchable, a deleted paper, counts here too and is written as nothing), documents written
    (`repaired`; ids queued, when a command hands them to the writer), and the last id examined
    (None when the walk reached the end)."""

    examined: int = 0
    missing: int = 0
    repaired: int = 0
    last: int | None = None

    def __str__(self) -> str:
        return (
            f"{self.examined} records examined, {self.missing} without a document in the "
            f"index; {self.repaired} documents written"
        )


def engine_reconcile(
    collection: Collection,
    *,
    after: int = 0,
    limit: int | None = None,
    repair: Callable[[list[int]], object] | None = None,
) -> EngineReconciled | None:
    """Compare the keyword engine's index of `collection` with its source, ENGINE_RECONCILE_RANGE
    ids at a time past `after`, at most about `limit` of them, and write the documents it lacks:
    here (the writer's process: the `search` worker's round) or through `repair` (ids; a command
    queues them for that writer). The catch-up rounds write what changed since the last one; this
    finds what a lost message left out of a record that has not changed since. None when no
    engine is configured (the database searches its own rows)."""
    if not engine_configured():
        return None
    backend = backend_for(collection)
    seen = EngineReconciled()
    for ids in collection.id_batches(settings.ENGINE_RECONCILE_RANGE, after=after):
        held = backend.held(ids)
        if held is None:
            return None
        missing = sorted(set(ids) - held)
        for start in range(0, len(missing), TASK_CHUNK):
            chunk = missing[start : start + TASK_CHUNK]
            if repair is None:
                seen.repaired += backend.index(chunk)
            else:
                repair(chunk)
                seen.repaired += len(chunk)
        seen.examined += len(ids)
        seen.missing += len(missing)
        seen.last = ids[-1]
        if limit is not None and seen.examined >= limit:
            return seen
    seen.last = None
    return seen


@shared_task(name="search.reconcile_engine", acks_late=True)
def reconcile_engine_task() -> dict[str, str]:
    """Celery beat, on the search queue (the engine's one writer): each round compares the next
    ENGINE_RECONCILE_ROWS records of each collection with the keyword engine's index (a walk
    over all of them, where the last round stopped, kept in the cache) and writes the documents
    it lacks."""
    done = {}
    for name in settings.SEARCH_COLLECTIONS:
        collection = collection_named(name)
        key = f"engine-reconcile:{settings.SEARCH_ENGINE}:{name}"
        after = _cache_get(key, 0)
        walk = engine_reconcile(collection, after=after, limit=settings.ENGINE_RECONCILE_ROWS)
        if walk is None:
            continue
        if after and not walk.examined:
            walk = engine_reconcile(collection, limit=settings.ENGINE_RECONCILE_ROWS)
            assert walk is not None
        _cache_set(key, walk.last or 0)
        if walk.repaired:
            logger.warning("search engine index of %s reconciled: %s", name, walk)
        done[name] = str(walk)
    return done


def _reconcile_key(collection: Collection) -> str:
    return f"vector-reconcile:{settings.VECTOR_ENGINE}:{collection.name}"


@shared_task(name="search.reconcile_vectors", acks_late=True)
def reconcile_vectors_task() -> dict[str, str]:
    """Celery beat, on the search queue (the vector index's one writer): each round compares
    the newest VECTOR_RECONCILE_NEWEST stored vectors of each collection with its index, then
    the next VECTOR_RECONCILE_ROWS of a walk over all of them (where the last round stopped,
    kept in the cache; from the start when it is lost), and writes what differs. A vector
    whose index message was lost (the broker down as its batch committed) is back within a
    round when it is among the newest, within a full walk otherwise."""
    done = {}
    for name in settings.SEARCH_COLLECTIONS:
        collection = collection_named(name)
        if collection.vectors is None:
            continue
        key = _reconcile_key(collection)
        after = _cache_get(key, 0)
        walk = vectors_reconcile(collection, after=after, limit=settings.VECTOR_RECONCILE_ROWS)
        if walk is None:
            continue
        if after and not walk.examined:
            # The last round stopped at the last id: this one starts the next walk.
            after = 0
            walk = vectors_reconcile(collection, limit=settings.VECTOR_RECONCILE_ROWS)
            assert walk is not None
        _cache_set(key, walk.last or 0)
        whole = not after and walk.last is None  # the walk compared every stored vector
        if settings.VECTOR_RECONCILE_NEWEST and not whole:
            walk.add(
                vectors_reconcile(collection, newest=settings.VECTOR_RECONCILE_NEWEST)
                or VectorsReconciled()
            )
        if walk.missing or walk.extra:
            logger.warning("vector index of %s reconciled: %s", name, walk)
        done[name] = str(walk)
    return done


def _cache_get(key: str, default: int) -> int:
    try:
        return int(cache.get(key, default))
    except Exception:  # noqa: BLE001 (the walk starts again from the first id: only slower)
        return default


def _cache_set(key: str, value: int) -> None:
    try:
        cache.set(key, value, None)
    except Exception:  # noqa: BLE001 (as above)
        logger.warning("reconcile: cache unreachable, the next walk starts over")


def vector_index_enqueue(collection: Collection, ids: Iterable[int]) -> None:
    """Send `ids` to the vector index's writer once the current transaction commits; never
    fails the caller (the sweep `search.reconcile_vectors` and `catch_up` write what a lost
    message leaves out)."""
    if not vector_index_configured():
        return
    send_after_commit("search.index_vectors", ids, args=(collection.name,), chunk=TASK_CHUNK)


def engine_index_enqueue(collection: Collection, ids: Iterable[int]) -> None:
    """Send `ids` to the indexer once the current transaction commits (at once outside one).
    Never fails the caller's write: `rebuild_search_index` repairs what a lost message
    leaves out."""
    if not engine_configured():
        return
    send_after_commit("search.index_engine", ids, args=(collection.name,), chunk=TASK_CHUNK)


def engine_index_send(collection: Collection, ids: Iterable[int], *, quiet: bool = False) -> str:
    """Send `ids` to the indexer now; returns "" when the broker took them (or there is no
    engine to feed), else why it did not, for a caller that then writes them itself (`quiet`:
    and says so itself)."""
    if not engine_configured():
        return ""
    return send_now(
        "search.index_engine", ids, args=(collection.name,), chunk=TASK_CHUNK, quiet=quiet
    )
