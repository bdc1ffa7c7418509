"""The keyword-search index on PostgreSQL, built as a stage of its own after papers are written.

A paper's search document is its weighted text-search vector (papers.models.PaperSearchDocument).
Computing it (`to_tsvector` over ~800 characters of abstract) and adding it to the GIN index cost
PostgreSQL about twice as much as writing the paper, its categories and its authorships, so the
import and the harvest only write papers, and this module indexes them on connections of its
own, beside the writing rather than inside it:

- `BackgroundIndexer`: during a snapshot import, the papers of each committed batch;
- `search_index_papers(ids)`: the papers a write just changed (a harvest page, in a worker;
  an admin edit, through the post_save signal);
- `search_index_pending()`: every paper whose document is missing or stale, by id range over
  one connection per core: after an import, and periodically from Celery beat to catch up on
  anything a failed task left behind.

Each is idempotent: a document built from the paper's current digest is left alone.
On SQLite the FTS5 table is kept by triggers, so there is nothing to do and they return 0.
With a search engine configured (SEARCH_ENGINE tantivy or opensearch) nothing reads these
documents: keyword search asks the engine, so none are built and they return 0 too. Should a
deployment go back to the database engine, the sweep (or `manage.py catch_up`) builds every
missing one.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from django.db import connection, connections
from django.db.models import Max, Min

from wovepaper.lib.batches import chunked
from wovepaper.lib.search.engine_feed import engine_configured, engine_index_enqueue

from ..models import Paper, PaperSearchDocument
from . import PAPERS

logger = logging.getLogger(__name__)

DOCUMENT_TABLE = PaperSearchDocument._meta.db_table
GIN_INDEX = "paper_search_document_gin"
VECTOR_SQL = (
    "setweight(to_tsvector('english'::regconfig, coalesce(p.title, '')), 'A') || "
    "setweight(to_tsvector('english'::regconfig, coalesce(p.abstract, '')), 'B') || "
    "setweight(to_tsvector('english'::regconfig, coalesce(p.authors, '')), 'C')"
)
# Papers per statement, by id list and by id range: large enough that per-statement overhead
# vanishes, small enough that one statement's work (and its locks) stays short.
ID_CHUNK = 5_000
RANGE_SPAN = 20_000
# After writing this many documents in a row, merge GIN's pending list (see _bulk_session).
FLUSH_AFTER = 10_000

_UPSERT = (
    f"INSERT INTO {DOCUMENT_TABLE} (paper_id, source_hash, document) "
    f"SELECT p.id, p.source_hash, {VECTOR_SQL} FROM papers_paper p "
    f"LEFT JOIN {DOCUMENT_TABLE} d ON d.paper_id = p.id "
    "WHERE {where} "
    "ON CONFLICT (paper_id) DO UPDATE "
    "SET source_hash = EXCLUDED.source_hash, document = EXCLUDED.document"
)
# What the engines' documents hold (papers.search.documents).
ENGINE_FIELDS = {
    "title",
    "abstract",
    "authors",
    "categories",
    "published",
    "cited_by_count",
    "is_deleted",
}
_STALE = "(d.paper_id IS NULL OR d.source_hash <> p.source_hash)"


def search_index_enabled() -> bool:
    """Whether PostgreSQL's search documents are what keyword search reads (see above)."""
    return connection.vendor == "postgresql" and not engine_configured()


def search_index_papers(paper_ids: Sequence[int], *, force: bool = False) -> int:
    """Build the documents of these papers now; returns how many were written.

    Without `force` a document already built from the paper's current digest is skipped;
    `force` rebuilds it anyway, for edits that do not change the digest (the admin).
    """
    if not paper_ids or not search_index_enabled():
        return 0
    where = "p.id = ANY(%s)" + ("" if force else f" AND {_STALE}")
    written = 0
    with connection.cursor() as cursor:
        for chunk in chunked(paper_ids, ID_CHUNK):
            cursor.execute(_UPSERT.format(where=where), [chunk])
            written += cursor.rowcount
    return written


def _index_range(first_id: int, last_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            _UPSERT.format(where=f"p.id BETWEEN %s AND %s AND {_STALE}"), [first_id, last_id]
        )
        return cursor.rowcount


def _bulk_session() -> None:
    """Settings for a connection that only indexes, many documents in a row.

    GIN appends new entries to a pending list and merges it into the index when it outgrows
    gin_pending_list_limit, sorting them in work_mem. At the defaults (4 MB each) a backfill
    merges hundreds of times in small pieces; at 64 MB and 256 MB, adding 50,000 documents
    to the index costs 39 us a document instead of 52 us, about what building the index once
    costs. `search_index_flush` merges what is left, so that searches need not read a long
    pending list.

    Its commits do not wait for the WAL flush (synchronous_commit off): a document lost to a
    crash is derived data, which the sweep builds again.
    """
    with connection.cursor() as cursor:
        cursor.execute("SET gin_pending_list_limit = '64MB'")
        cursor.execute("SET work_mem = '256MB'")
        cursor.execute("SET synchronous_commit = off")


def _in_own_connection(function, *args):
    try:
        _bulk_session()
        return function(*args)
    finally:
        connections.close_all()  # this thread's connections only: Django keeps them per thread


def search_index_flush() -> None:
    """Merge GIN's pending list into the index, after a large fill (it sorts in
    maintenance_work_mem, raised for this statement only)."""
    if search_index_enabled():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('maintenance_work_mem', '256MB', %s)",
                [connection.in_atomic_block],
            )
            cursor.execute("SELECT gin_clean_pending_list(%s::regclass)", [GIN_INDEX])
            if not connection.in_atomic_block:
                cursor.execute("RESET maintenance_work_mem")


def search_index_pending(
    *, workers: int | None = None, progress: Callable[[int], None] | None = None
) -> int:
    """Build every missing or stale document, walking the papers by id range; returns how many.

    Outside a transaction the ranges are spread over `workers` connections (default: one per
    CPU), since the work is PostgreSQL's and each connection uses a core. Inside one (a test,
    a caller's atomic block) other connections could not see its rows, so it runs in place.
    """
    if not search_index_enabled():
        return 0
    bounds = Paper.objects.aggregate(first=Min("id"), last=Max("id"))
    first, last = bounds["first"], bounds["last"]
    if first is None:
        return 0
    ranges = [
        (start, min(start + RANGE_SPAN - 1, last)) for start in range(first, last + 1, RANGE_SPAN)
    ]
    workers = workers or os.cpu_count() or 1
    written = 0
    if connection.in_atomic_block or workers < 2:
        for first_id, last_id in ranges:
            done = _index_range(first_id, last_id)
            written += done
            if progress:
                progress(done)
        return written
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for done in pool.map(lambda r: _in_own_connection(_index_range, *r), ranges):
            written += done
            if progress:
                progress(done)
    if written >= FLUSH_AFTER:
        search_index_flush()
    return written


class BackgroundIndexer:
    """Indexes the papers of committed batches on its own connection while the caller goes on
    writing the next ones, so the two use both cores. Submitted ids must be committed: another
    connection cannot see them before. A failure is logged and ends the indexing, never the
    import: `search_index_pending` afterwards catches up on whatever is left.
    """

    def __init__(self, *, depth: int = 4) -> None:
        self._queue: queue.Queue[list[int] | None] = queue.Queue(maxsize=depth)
        self.written = 0
        self._thread = threading.Thread(target=self._work, name="search-indexer", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            _bulk_session()
            while (paper_ids := self._queue.get()) is not None:
                self.written += search_index_papers(paper_ids)
            if self.written >= FLUSH_AFTER:
                search_index_flush()
        except Exception:
            logger.exception("background search indexing stopped; the sweep will catch up")
            while self._queue.get() is not None:  # keep draining so submit() never blocks
                pass
        finally:
            connections.close_all()

    def submit(self, paper_ids: list[int]) -> None:
        self._queue.put(paper_ids)

    def close(self) -> int:
        """Wait for the submitted papers to be indexed; returns how many documents it wrote."""
        self._queue.put(None)
        self._thread.join()
        return self.written


def paper_saved_reindex(sender, instance: Paper, update_fields=None, **kwargs) -> None:
    """post_save: a paper saved one at a time (the admin, a fix by hand) is searchable as saved.
    The bulk writers (import, harvest) send no signal and leave their papers to the stage."""
    changed = set(update_fields) if update_fields is not None else None
    if changed is None or ENGINE_FIELDS & changed:
        engine_index_enqueue(PAPERS, [instance.pk])
    if changed is not None and not {"title", "abstract", "authors"} & changed:
        return  # nothing the PostgreSQL document is built from
    search_index_papers([instance.pk], force=True)
