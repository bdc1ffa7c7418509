"""The keyword-search index on PostgreSQL, built as a stage of its own after papers are written.

A paper's search document is its weighted text-search vector (papers.models.PaperSearchDocument).
Computing it (`to_tsvector` over ~800 characters of abstract) and adding it to the GIN index cost
PostgreSQL about twice as much as writing the paper, its categories and its authorships, so the
import and the harvest only write papers, and this module indexes them:

- `search_index_papers(ids)`: the papers a write just changed (the harvest after each page,
  an admin edit through the post_save signal);
- `search_index_pending()`: every paper whose document is missing or stale, by id range, after
  a snapshot import and periodically from Celery beat, to catch up on anything a failed task
  left behind. Into an empty index (the first backfill) it fills the table with the GIN index
  dropped and builds the index once at the end, which costs a third less than growing it.

Either is idempotent: a document built from the paper's current digest is left alone.
On SQLite the FTS5 table is kept by triggers, so there is nothing to do and both return 0.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import islice

from django.db import connection, connections

from .models import Paper, PaperSearchDocument

DOCUMENT_TABLE = PaperSearchDocument._meta.db_table
GIN_INDEX = "paper_search_document_gin"
VECTOR_SQL = (
    "setweight(to_tsvector('english'::regconfig, coalesce(p.title, '')), 'A') || "
    "setweight(to_tsvector('english'::regconfig, coalesce(p.abstract, '')), 'B')"
)
# Ids per statement: large enough that per-statement overhead vanishes, small enough that one
# statement's work (and its locks) stays short.
ID_CHUNK = 5_000
RANGE_SPAN = 20_000
# Below this many papers to index, an empty index is grown in place rather than rebuilt.
BULK_MIN_PAPERS = 20_000

_UPSERT = (
    f"INSERT INTO {DOCUMENT_TABLE} (paper_id, source_hash, document) "
    f"SELECT p.id, p.source_hash, {VECTOR_SQL} FROM papers_paper p "
    f"LEFT JOIN {DOCUMENT_TABLE} d ON d.paper_id = p.id "
    "WHERE {where} "
    "ON CONFLICT (paper_id) DO UPDATE "
    "SET source_hash = EXCLUDED.source_hash, document = EXCLUDED.document"
)
_STALE = "(d.paper_id IS NULL OR d.source_hash <> p.source_hash)"


def search_index_enabled() -> bool:
    return connection.vendor == "postgresql"


def _chunks(values: Iterable[int], size: int):
    iterator = iter(values)
    while chunk := list(islice(iterator, size)):
        yield chunk


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
        for chunk in _chunks(paper_ids, ID_CHUNK):
            cursor.execute(_UPSERT.format(where=where), [chunk])
            written += cursor.rowcount
    return written


def _index_range(first_id: int, last_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT.format(where=f"p.id BETWEEN %s AND %s AND {_STALE}"),
                       [first_id, last_id])
        return cursor.rowcount


def _index_range_in_thread(first_id: int, last_id: int) -> int:
    try:
        return _index_range(first_id, last_id)
    finally:
        connections.close_all()  # this thread's connection only: they are per thread


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
    bounds = Paper.objects.order_by().values_list("id", flat=True)
    first, last = bounds.order_by("id").first(), bounds.order_by("-id").first()
    if first is None:
        return 0
    ranges = [(start, min(start + RANGE_SPAN - 1, last))
              for start in range(first, last + 1, RANGE_SPAN)]
    # Not inside a transaction: there the new documents' deferred foreign-key checks would
    # forbid building the index until commit.
    in_place = connection.in_atomic_block or (workers or os.cpu_count() or 1) < 2
    bulk = (not connection.in_atomic_block and last - first + 1 >= BULK_MIN_PAPERS
            and not PaperSearchDocument.objects.exists())
    if bulk:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP INDEX IF EXISTS {GIN_INDEX}")
    written = 0
    try:
        if in_place:
            for first_id, last_id in ranges:
                done = _index_range(first_id, last_id)
                written += done
                if progress:
                    progress(done)
        else:
            with ThreadPoolExecutor(max_workers=workers or os.cpu_count()) as pool:
                for done in pool.map(lambda r: _index_range_in_thread(*r), ranges):
                    written += done
                    if progress:
                        progress(done)
    finally:
        search_index_ensure(build_memory="512MB" if bulk else None)
    return written


def search_index_ensure(*, build_memory: str | None = None) -> None:
    """Create the GIN index if it is missing (after a bulk fill, or one a crash interrupted)."""
    if not search_index_enabled():
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s)", [GIN_INDEX])
        if cursor.fetchone()[0] is not None:
            return
        if build_memory:
            # A GIN build sorts in maintenance_work_mem; the 64 MB default spills to disk.
            cursor.execute("SELECT set_config('maintenance_work_mem', %s, %s)",
                           [build_memory, connection.in_atomic_block])
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {GIN_INDEX} ON {DOCUMENT_TABLE} USING GIN (document)"
        )
        if build_memory and not connection.in_atomic_block:
            cursor.execute("RESET maintenance_work_mem")


def paper_saved_reindex(sender, instance: Paper, **kwargs) -> None:
    """post_save: a paper saved one at a time (the admin, a fix by hand) is searchable as saved.
    The bulk writers (import, harvest) send no signal and leave their papers to the stage."""
    search_index_papers([instance.pk], force=True)
