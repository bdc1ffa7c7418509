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
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path

from celery import shared_task
from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import import_string

from ..queueing import send_after_commit, send_now
from .base import Collection
from .registry import backend_for

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


@shared_task(
    name="search.index_engine",
    acks_late=True,
    autoretry_for=(Exception,),
    retry_backoff=5,
    max_retries=5,
)
def index_engine(collection: str, ids: list[int]) -> int:
    """Make the engine's documents of these ids current (or remove them). Idempotent; retried
    when the index is busy (another writer holds tantivy's lock) or the cluster is away."""
    return backend_for(collection_named(collection)).index(ids)


@shared_task(
    name="search.index_vectors",
    acks_late=True,
    autoretry_for=(Exception,),
    retry_backoff=5,
    max_retries=5,
)
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


def vector_index_enqueue(collection: Collection, ids: Iterable[int]) -> None:
    """Send `ids` to the vector index's writer once the current transaction commits; never
    fails the caller (`rebuild_vector_index` repairs what a lost message leaves out)."""
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


def engine_index_send(collection: Collection, ids: Iterable[int]) -> str:
    """Send `ids` to the indexer now; returns "" when the broker took them (or there is no
    engine to feed), else why it did not, for a caller that then writes them itself."""
    if not engine_configured():
        return ""
    return send_now("search.index_engine", ids, args=(collection.name,), chunk=TASK_CHUNK)
