"""Bulk import of the arXiv metadata snapshot: streaming, batched, idempotent."""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from django.db import DatabaseError, connection

from wovepaper.lib.search import backend_for
from wovepaper.lib.search.base import BulkLoad, BulkLoadBusy
from wovepaper.lib.search.engine_feed import engine_configured, engine_index_enqueue

from ..models import Authorship, Paper, PaperCategory, PaperSearchDocument
from ..search import PAPERS
from ..search.documents import paper_document_of_record
from ..search.embedding_stage import embed_enqueue
from ..search.postgres_documents import (
    BackgroundIndexer,
    search_index_enabled,
    search_index_pending,
)
from .records import PaperRecord, RecordError
from .snapshot import iter_snapshot_bytes, line_text, parse_snapshot_line
from .upsert import UpsertCounts, UpsertResult, papers_upsert_records, record_rejection

ProgressCallback = Callable[[int], None]
T = TypeVar("T")

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class ParsedBatch:
    records: list[PaperRecord] = field(default_factory=list)
    # (line number, reason, the line as read) for each line that could not be parsed
    rejected: list[tuple[int, str, str]] = field(default_factory=list)


def snapshot_batches(path: str | Path, batch_size: int) -> Iterator[ParsedBatch]:
    """Read and parse a snapshot, `batch_size` good records at a time (pure: no database)."""
    batch = ParsedBatch()
    for line_number, line in iter_snapshot_bytes(path):
        try:
            batch.records.append(parse_snapshot_line(line))
        except RecordError as exc:
            batch.rejected.append((line_number, str(exc), line_text(line)))
            continue
        if len(batch.records) >= batch_size:
            yield batch
            batch = ParsedBatch()
    if batch.records or batch.rejected:
        yield batch


def in_background(items: Iterator[T], *, depth: int = 2) -> Iterator[T]:
    """Produce `items` in a worker thread, at most `depth` ahead of the consumer.

    The import alternates between parsing (Python, holding the GIL) and waiting on the
    database (GIL released); reading ahead lets the next batch be parsed while the server
    indexes the current one. The worker must not touch the database: Django connections are
    per thread, and it would write outside the caller's transaction.
    """
    slots: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: tuple[str, object]) -> bool:
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put(("item", item)):
                    return
        except BaseException as exc:  # handed to the consumer, which re-raises it
            put(("error", exc))
            return
        put(("done", None))

    worker = threading.Thread(target=work, name="snapshot-reader", daemon=True)
    worker.start()
    try:
        while True:
            kind, value = slots.get()
            if kind == "done":
                return
            if kind == "error":
                raise value  # type: ignore[misc]
            yield value  # type: ignore[misc]
    finally:
        stop.set()
        worker.join(timeout=5)


def snapshot_import(
    path: str | Path,
    *,
    batch_size: int = 2000,
    progress: ProgressCallback | None = None,
    on_rejected: Callable[[int, str], None] | None = None,
    build_search_index: bool = True,
) -> tuple[UpsertCounts, list[int]]:
    """Import a snapshot file (plain or gzipped JSON lines). Safe to rerun.

    A malformed line is recorded as a RejectedRecord (with its line number and reason) and
    skipped. Returns the counts and the ids of created or changed papers.

    With a search engine configured (SEARCH_ENGINE tantivy), the import feeds the engine's
    index itself through one writer held for the whole import (`EngineFeed`): each batch's
    new papers go in as documents made from their records, changed ones are read back, and
    the index commits before this returns, so every paper is searchable when it ends.
    PostgreSQL's own search documents are then not built: nothing reads them with an engine
    (papers.search.postgres_documents). Should another process hold the index's writer, the ids go
    to the search indexer's queue as other writes do.

    With the database engine, the search documents (papers.search.postgres_documents) are built as
    each batch commits, on a connection of their own beside the load, then a sweep catches anything
    missed; inside a transaction, where no other connection can see the new rows, after the
    load. `build_search_index=False` leaves them (and the engine's documents) to the periodic
    sweeps (the benchmark uses it to time the load alone).

    Into an empty papers table (the first import) batches are COPY'd without first looking
    for stored papers (papers_upsert's `first_load`). On PostgreSQL its commits do not wait for
    the WAL to reach the disk (synchronous_commit off, this connection, this import only): a
    crash may lose the last fraction of a second of batches, which a rerun writes again, as it
    would the batches after them.
    """
    source = f"snapshot:{Path(path).name}"
    counts = UpsertCounts()
    changed_ids: list[int] = []
    first_load = not Paper.objects.exists()
    indexer = (
        BackgroundIndexer()
        if build_search_index and search_index_enabled() and not connection.in_atomic_block
        else None
    )
    feed = EngineFeed.start() if build_search_index and not connection.in_atomic_block else None
    _synchronous_commit(False)
    try:
        for batch in in_background(snapshot_batches(path, batch_size)):
            counts.rejected += _set_aside(batch, source, on_rejected, progress)
            if batch.records:
                result = papers_upsert_records(batch.records, first_load=first_load)
                ids = result.ids
                counts.add(result.counts)
                changed_ids.extend(ids)
                if indexer and ids:
                    indexer.submit(ids)
                if feed and ids:
                    feed.add(result)
                elif build_search_index:
                    engine_index_enqueue(PAPERS, ids)
                if build_search_index:
                    embed_enqueue(ids)
                if progress:
                    progress(len(batch.records))
    finally:
        _synchronous_commit(True)
        if indexer:
            indexer.close()
        if feed:
            # What was added belongs to committed batches: it is committed even when the
            # import stops early.
            feed.close()
    if first_load and counts.created:
        _analyze_loaded_tables(search_documents=indexer is not None)
    if build_search_index:
        search_index_pending()
    return counts, changed_ids


class EngineFeed:
    """The import's papers into the search engine's index through one bulk writer, opened at
    the first batch that changes anything (a rerun that changes nothing never takes the
    index's lock)."""

    def __init__(self) -> None:
        self._load: BulkLoad | None = None
        self._unavailable = False

    @classmethod
    def start(cls) -> EngineFeed | None:
        return cls() if engine_configured() else None

    def add(self, result: UpsertResult) -> None:
        load = self._writer()
        if load is None:
            engine_index_enqueue(PAPERS, result.ids)
            return
        documents = []
        created = set()
        for pk, record in result.created:
            created.add(pk)
            document = paper_document_of_record(pk, record)
            if document is not None:
                documents.append(document)
        load.add_new(documents)
        others = [pk for pk in result.ids if pk not in created]
        if others:
            load.replace(others, PAPERS.documents(others))

    def _writer(self) -> BulkLoad | None:
        if self._load is None and not self._unavailable:
            try:
                self._load = backend_for(PAPERS).bulk_load()
            except BulkLoadBusy as exc:
                logger.warning("snapshot import: %s; its papers go to the search indexer", exc)
            self._unavailable = self._load is None
        return self._load

    def close(self) -> None:
        if self._load is not None:
            self._load.close()
            self._load = None


def _set_aside(
    batch: ParsedBatch,
    source: str,
    on_rejected: Callable[[int, str], None] | None,
    progress: ProgressCallback | None,
) -> int:
    """Record the batch's unparsable lines as RejectedRecords; returns how many."""
    for line_number, reason, raw in batch.rejected:
        record_rejection(
            source=source,
            record_key=f"line {line_number}",
            reason=f"line {line_number}: {reason}",
            raw=raw,
        )
        if on_rejected:
            on_rejected(line_number, reason)
        if progress:
            progress(1)
    return len(batch.rejected)


def _analyze_loaded_tables(*, search_documents: bool) -> None:
    """Give PostgreSQL's planner the statistics of what a first load wrote. Until a table is
    analysed the planner guesses: at 1M papers it took 20 paper ids to match ~8,000 of 5M
    authorships, not 88, and read a search page's bylines with parallel workers in 42 ms
    instead of an index scan in 0.15 ms. Autovacuum would get there in its own time, or never
    where it is off. About 15 s at 1M papers, most of it the papers' wide rows."""
    if connection.vendor != "postgresql":
        return
    models = [Paper, Authorship, PaperCategory]
    if search_documents:
        models.append(PaperSearchDocument)
    tables = ", ".join(connection.ops.quote_name(model._meta.db_table) for model in models)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")


def _synchronous_commit(on: bool) -> None:
    """Stop waiting for the WAL flush at each commit for an import; back to the configured
    setting after it (never raising there: a failed import's own error is the one to see)."""
    if connection.vendor != "postgresql":
        return
    if not on:
        with connection.cursor() as cursor:
            cursor.execute("SET synchronous_commit = off")
        return
    with contextlib.suppress(DatabaseError), connection.cursor() as cursor:
        cursor.execute("RESET synchronous_commit")
