"""Bulk import of the arXiv metadata snapshot: streaming, batched, idempotent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .ingest import UpsertCounts, papers_upsert, record_rejection
from .records import PaperRecord, RecordError
from .snapshot import iter_snapshot_lines, parse_snapshot_line

ProgressCallback = Callable[[int], None]


def snapshot_import(
    path: str | Path,
    *,
    batch_size: int = 2000,
    progress: ProgressCallback | None = None,
    on_rejected: Callable[[int, str], None] | None = None,
) -> tuple[UpsertCounts, list[int]]:
    """Import a snapshot file (plain or gzipped JSON lines). Safe to rerun.

    A malformed line is recorded as a RejectedRecord (with its line number and reason) and
    skipped. Returns the counts and the ids of created or changed papers.
    """
    source = f"snapshot:{Path(path).name}"
    counts = UpsertCounts()
    changed_ids: list[int] = []
    batch: list[PaperRecord] = []

    def flush() -> None:
        batch_counts, ids = papers_upsert(batch)
        counts.add(batch_counts)
        changed_ids.extend(ids)
        if progress:
            progress(len(batch))
        batch.clear()

    for line in iter_snapshot_lines(path):
        try:
            batch.append(parse_snapshot_line(line.text))
        except RecordError as exc:
            counts.rejected += 1
            reason = f"line {line.line_number}: {exc}"
            record_rejection(source=source, record_key=f"line {line.line_number}",
                             reason=reason, raw=line.text)
            if on_rejected:
                on_rejected(line.line_number, str(exc))
            if progress:
                progress(1)
            continue
        if len(batch) >= batch_size:
            flush()
    if batch:
        flush()
    return counts, changed_ids
