"""The demo's citations: recorded Semantic Scholar and OpenAlex answers that name citations of
the demo's papers (`recordings/citations.json`, built by tools/extract_citation_recordings.py;
PROVENANCE.md says from where), written through production's loaders.

They are written as recorded, not fetched through the replay server: the replay answers a
paper it holds no recording of as unknown to the source, which for citations would say that
Semantic Scholar or OpenAlex knows no references of papers they do know.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from papers.citations.load import (
    CitingPaperEdges,
    Coverage,
    citation_coverage_record,
    citations_load,
    citing_works_add,
)
from papers.models import Paper
from sources.citation_answers import (
    arxiv_id_or_blank,
    openalex_counts_by_year,
    openalex_referenced_works,
    s2_work,
)
from wovepaper.lib.identifiers import ARXIV_DOI_PREFIX, doi_normalized

from .replay import RECORDINGS


@dataclass
class DemoCitations:
    references: int = 0
    papers_with_references: int = 0
    citing_edges: int = 0

    def describe(self) -> str:
        return (
            f"Citations from recorded answers: {self.references} references of "
            f"{self.papers_with_references} papers (OpenAlex); {self.citing_edges} citing "
            f"papers newly linked to a recorded paper (Semantic Scholar's lists of citing "
            f"papers; a link already made is kept, not counted again)."
        )


def _day(recorded: str) -> datetime:
    return datetime.fromisoformat(recorded).replace(tzinfo=UTC)


def demo_citations_load(path: Path = RECORDINGS / "citations.json") -> DemoCitations:
    """Write the recorded citations of the archive's papers. Idempotent: references replace
    the paper's edges from that source, citing edges are added once."""
    recordings = json.loads(path.read_text(encoding="utf-8"))
    summary = DemoCitations()
    works = {}
    for record in recordings["openalex_works"]:
        doi = doi_normalized(record["answer"].get("doi"))
        if doi.startswith(ARXIV_DOI_PREFIX):
            works[arxiv_id_or_blank(doi.removeprefix(ARXIV_DOI_PREFIX))] = record
    papers = dict(Paper.objects.filter(arxiv_id__in=works).values_list("arxiv_id", "pk"))
    edges, coverages = [], []
    for arxiv_id, pk in sorted(papers.items()):
        record = works[arxiv_id]
        answer, fetched_at = record["answer"], _day(record["recorded"])
        references = openalex_referenced_works(answer)
        edges.append(CitingPaperEdges(pk, "openalex", fetched_at, references))
        coverages.append(
            Coverage(
                paper_id=pk,
                source="openalex",
                fetched_at=fetched_at,
                known=True,
                references_listed=len(references),
                cited_by_count=answer.get("cited_by_count"),
                counts_by_year=openalex_counts_by_year(answer),
            )
        )
    summary.references = citations_load(edges)
    summary.papers_with_references = sum(1 for e in edges if e.works)
    citation_coverage_record(coverages)
    for record in recordings["semanticscholar_citing"]:
        summary.citing_edges += citing_works_add(
            cited=s2_work(record["cited"]),
            source="s2",
            fetched_at=_day(record["recorded"]),
            citing_works=[s2_work(w) for w in record["citing"]],
        )
    return summary
