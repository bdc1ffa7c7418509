"""Bulk import of the arXiv metadata snapshot: streaming, batched, idempotent."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from django.db import DatabaseError, connection

from wovepaper.lib.search.indexer import engine_index_enqueue

from .embedding import embed_enqueue
from .indexing import BackgroundIndexer, search_index_enabled, search_index_pending
from .ingest import UpsertCounts, papers_upsert, record_rejection
from .models import Paper
from .records import PaperRecord, RecordError
from .search import PAPERS
from .snapshot import iter_snapshot_lines, parse_snapshot_line

ProgressCallback = Callable[[int], None]
T = TypeVar("T")


@dataclass(slots=True)
class ParsedBatch:
    records: list[PaperRecord] = field(default_factory=list)
    # (line number, reason, the line as read) for each line that could not be parsed
    rejected: list[tuple[int, str, str]] = field(default_factory=list)


def snapshot_batches(path: str | Path, batch_size: int) -> Iterator[ParsedBatch]:
    """Read and parse a snapshot, `batch_size` good records at a time (pure: no database)."""
    batch = ParsedBatch()
    for line in iter_snapshot_lines(path):
        try:
            batch.records.append(parse_snapshot_line(line.text))
        except RecordError as exc:
            batch.rejected.append((line.line_number, str(exc), line.text))
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

    Their search documents (papers.indexing) are built as each batch commits, on a connection
    of their own beside the load, then a sweep catches anything missed; inside a transaction,
    where no other connection can see the new rows, after the load. `build_search_index=False`
    leaves them to the periodic sweep (the benchmark uses it to time the load alone).

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
    _synchronous_commit(False)
    try:
        for batch in in_background(snapshot_batches(path, batch_size)):
            for line_number, reason, raw in batch.rejected:
                counts.rejected += 1
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
            if batch.records:
                batch_counts, ids = papers_upsert(batch.records, first_load=first_load)
                counts.add(batch_counts)
                changed_ids.extend(ids)
                if indexer and ids:
                    indexer.submit(ids)
                if build_search_index:
                    engine_index_enqueue(PAPERS, ids)
                    embed_enqueue(ids)
                if progress:
                    progress(len(batch.records))
    finally:
        _synchronous_commit(True)
        if indexer:
            indexer.close()
    if build_search_index:
        search_index_pending()
    return counts, changed_ids


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
