"""Citations from bulk files: the works of OpenAlex's snapshot, written as the API's answers are.

OpenAlex publishes its whole database as gzipped JSON lines, one work a line, each the object its
API answers (https://docs.openalex.org/download-all-data/snapshot-data-format). A work that is an
archive paper (its arXiv DOI, or an arxiv.org location: `work_arxiv_id`) gives that paper's
references and citations per year through the same rows as the API path
(`openalex_citation_rows`, `citations_load`, `citation_coverage_record`), so a paper loaded from
the snapshot and fetched later holds the same rows, replaced, never doubled. The file is read a
line at a time and written a batch of papers at a time; a line that is not a work is set aside
(RejectedRecord: the file and line number, the reason) and the load goes on. A rerun of the
same file writes the same rows.

The date the rows carry is the snapshot's (`as_of`), not the load's: "references known from
OpenAlex, <date>" must say when OpenAlex said so.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, cast

import orjson

from papers.citations.load import citation_coverage_record, citations_load
from papers.ingest.upsert import record_rejection
from papers.models import Paper
from sources.openalex import OACitations, parse_citations

from .fetch import openalex_citation_rows

BATCH_WORKS = 2_000


@dataclass
class CitationFileResult:
    works: int = 0  # lines that were works
    archive_papers: int = 0  # of those, works that are papers of the archive
    edges: int = 0
    set_aside: int = 0


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    handle = cast(IO[bytes], gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb"))
    with handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield number, line


def openalex_works_file_load(path: Path, *, as_of: datetime) -> CitationFileResult:
    """Load the references and citations per year of the archive papers among the works of one
    snapshot file (`.gz` or plain JSON lines)."""
    result = CitationFileResult()
    source = f"openalex-snapshot:{path.name}"
    batch: dict[str, OACitations] = {}
    for number, line in _lines(path):
        try:
            data = orjson.loads(line)
            if not isinstance(data, dict) or not data.get("id"):
                raise ValueError("not a work (no id)")
            work = parse_citations(data)
        except (ValueError, TypeError, AttributeError) as error:  # a line that is not a work
            record_rejection(
                source=source,
                record_key=f"line {number}",
                reason=str(error),
                raw=line[:2000].decode("utf-8", "replace"),
            )
            result.set_aside += 1
            continue
        result.works += 1
        if work.arxiv_id is None:
            continue
        current = batch.get(work.arxiv_id)
        # Of several records of one paper, the one listing the most references, as the API path.
        if current is None or len(work.references) > len(current.references):
            batch[work.arxiv_id] = work
        if len(batch) >= BATCH_WORKS:
            _write(batch, as_of, result)
            batch = {}
    if batch:
        _write(batch, as_of, result)
    return result


def _write(batch: dict[str, OACitations], as_of: datetime, result: CitationFileResult) -> None:
    """One query finds the archive papers among the batch's works; their rows are written in
    one load."""
    papers = Paper.objects.filter(arxiv_id__in=list(batch)).values_list("pk", "arxiv_id")
    coverages, edges = [], []
    for pk, arxiv_id in papers:
        coverage, paper_edges = openalex_citation_rows(pk, batch[arxiv_id], as_of)
        coverages.append(coverage)
        if paper_edges is not None:
            edges.append(paper_edges)
    result.archive_papers += len(coverages)
    result.edges += citations_load(edges)
    citation_coverage_record(coverages)
