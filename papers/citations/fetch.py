"""Asking Semantic Scholar and OpenAlex for papers' citations, in the batches matching makes,
and writing what they answer through papers.citations.load (edges and coverage).

The sources are asked one after the other; one that cannot answer changes nothing of its own
edges and coverage (the other's are still written), and the result says which failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from papers.citations.load import (
    CitingPaperEdges,
    Coverage,
    citation_coverage_record,
    citations_load,
    citing_works_load,
    papers_citations_due,
)
from papers.ingest.upsert import record_rejection
from papers.models import CitationCoverage, Paper
from sources.openalex import OACitations, OpenAlexClient
from sources.semantic_scholar import S2References, SemanticScholarClient, arxiv_key
from wovepaper.lib.http import ServiceError

# RejectedRecord.source of a references-endpoint item set aside (record_key: "<arXiv id>
# <cited paper's S2 id or #position>").
REFERENCES_REJECTED_SOURCE = "s2:references"


@dataclass
class CitationFetchResult:
    papers: int = 0
    edges: int = 0  # references written (both sources)
    citing_edges: int = 0  # edges added from S2's lists of citing works
    detailed: int = 0  # papers whose S2 references came from the references endpoint
    set_aside: int = 0  # malformed references-endpoint items set aside (RejectedRecord)
    # The references endpoint's failures: those papers keep the batch's list, so the batch is
    # not failed (and retried) for them.
    detail_errors: list[str] = field(default_factory=list)
    unknown: dict[str, int] = field(default_factory=dict)  # source → papers it does not know
    errors: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.errors)


def _detail_candidates(papers: Sequence[Paper], graphs: dict, keys: dict[int, str]) -> list[Paper]:
    """The papers whose references the endpoint is asked for, within the per-batch budget:
    those S2 knows (the batch answered, or matching stored their S2 id), most cited first, then
    newest. A much-cited paper's page is the one readers open most, so its references'
    influence and citing sentences are seen most; the newest break ties, as papers due are
    taken newest first."""
    budget = settings.CITATIONS_S2_REFERENCES_PER_BATCH
    if budget <= 0:
        return []
    known = [p for p in papers if p.semantic_scholar_id or graphs.get(keys[p.pk]) is not None]
    known.sort(
        key=lambda p: (-(p.cited_by_count or 0), -(p.published.timestamp() if p.published else 0))
    )
    return known[:budget]


def _s2_fetch(
    papers: Sequence[Paper],
    client: SemanticScholarClient,
    now: datetime,
    result: CitationFetchResult,
) -> None:
    # S2's own id where matching stored it (it never changes), else the arXiv id.
    keys = {p.pk: p.semantic_scholar_id or arxiv_key(p.arxiv_id) for p in papers}
    graphs = client.citation_graphs(list(keys.values()))
    detailed: dict[int, S2References] = {}
    for paper in _detail_candidates(papers, graphs, keys):
        try:
            answer = client.references(keys[paper.pk])
        except ServiceError as exc:
            result.detail_errors.append(f"{paper.arxiv_id}: {exc}")
            continue
        if answer is not None:
            detailed[paper.pk] = answer
            for cited_id, reason, raw in answer.set_aside:
                record_rejection(
                    source=REFERENCES_REJECTED_SOURCE,
                    record_key=f"{paper.arxiv_id} {cited_id}",
                    reason=reason,
                    raw=raw,
                )
            result.set_aside += len(answer.set_aside)
    result.detailed += len(detailed)
    # Papers whose edges came from the references endpoint before and that it was not asked
    # for this time keep those edges: the batch's list would drop their influence and contexts.
    earlier_detail = dict(
        CitationCoverage.objects.filter(
            paper_id__in=[p.pk for p in papers], source="s2", references_detailed_at__isnull=False
        ).values_list("paper_id", "references_detailed_at")
    )
    edges, coverages = [], []
    for paper in papers:
        graph = graphs.get(keys[paper.pk])
        detail = detailed.get(paper.pk)
        references = detail.references if detail else graph.references if graph else None
        coverages.append(
            Coverage(
                paper_id=paper.pk,
                source="s2",
                fetched_at=now,
                known=references is not None,
                references_listed=len(references) if references is not None else None,
                cited_by_count=graph.citation_count if graph else None,
                references_detailed_at=now if detail else earlier_detail.get(paper.pk),
            )
        )
        if references is not None and (detail or paper.pk not in earlier_detail):
            edges.append(CitingPaperEdges(paper.pk, "s2", now, list(references)))
    result.edges += citations_load(edges)
    for paper in papers:
        graph = graphs.get(keys[paper.pk])
        if graph is not None and graph.citing:
            result.citing_edges += citing_works_load(
                cited_paper_id=paper.pk, source="s2", fetched_at=now, citing_works=graph.citing
            )
    citation_coverage_record(coverages)
    result.unknown["s2"] = sum(1 for c in coverages if not c.known)


def openalex_citation_rows(
    paper_id: int, work: OACitations | None, fetched_at: datetime
) -> tuple[Coverage, CitingPaperEdges | None]:
    """What an OpenAlex work says of an archive paper's citations, as the API's answer and a
    snapshot file both give it (papers.citations.files): its coverage, and its references
    (None when OpenAlex does not know the paper)."""
    coverage = Coverage(
        paper_id=paper_id,
        source="openalex",
        fetched_at=fetched_at,
        known=work is not None,
        references_listed=len(work.references) if work else None,
        cited_by_count=work.cited_by_count if work else None,
        counts_by_year=[list(pair) for pair in work.counts_by_year] if work else [],
    )
    if work is None:
        return coverage, None
    return coverage, CitingPaperEdges(paper_id, "openalex", fetched_at, list(work.references))


def _openalex_fetch(
    papers: Sequence[Paper], client: OpenAlexClient, now: datetime, result: CitationFetchResult
) -> None:
    works = client.citations_by_arxiv_id([p.arxiv_id for p in papers])
    edges, coverages = [], []
    for paper in papers:
        coverage, paper_edges = openalex_citation_rows(paper.pk, works.get(paper.arxiv_id), now)
        coverages.append(coverage)
        if paper_edges is not None:
            edges.append(paper_edges)
    result.edges += citations_load(edges)
    citation_coverage_record(coverages)
    result.unknown["openalex"] = sum(1 for c in coverages if not c.known)


def citations_fetch(
    paper_ids: Sequence[int],
    *,
    s2: SemanticScholarClient | None = None,
    openalex: OpenAlexClient | None = None,
    now: datetime | None = None,
) -> CitationFetchResult:
    """Ask both sources for these papers' references (and S2 for the works citing them) and
    replace each paper's edges from each source that answered (papers.citations_load), adding
    edges from the archive papers among S2's citing works; record each source's coverage.
    Up to CITATIONS_S2_REFERENCES_PER_BATCH papers' S2 references are read from the references
    endpoint instead of the batch (with influence, intents and contexts; see
    `_detail_candidates`), its malformed items set aside as RejectedRecords.

    Idempotent: a rerun replaces the same edges. A source that cannot answer (ServiceError,
    after the client's retries and Retry-After waits) leaves its edges and coverage as they
    were; `errors` says so."""
    papers = list(
        Paper.objects.filter(pk__in=paper_ids).only(
            "pk", "arxiv_id", "semantic_scholar_id", "cited_by_count", "published"
        )
    )
    result = CitationFetchResult(papers=len(papers))
    if not papers:
        return result
    now = now or timezone.now()
    s2_client = s2 or SemanticScholarClient()
    openalex_client = openalex or OpenAlexClient()
    try:
        try:
            _s2_fetch(papers, s2_client, now, result)
        except ServiceError as exc:
            result.errors.append(str(exc))
        try:
            _openalex_fetch(papers, openalex_client, now, result)
        except ServiceError as exc:
            result.errors.append(str(exc))
    finally:
        if s2 is None:
            s2_client.close()
        if openalex is None:
            openalex_client.close()
    return result


def citation_papers_due(*, limit: int, now: datetime | None = None) -> list[int]:
    """The next papers to fetch citations for: never asked Semantic Scholar, newest first, then
    those asked longest ago, before CITATIONS_REFRESH_DAYS."""
    stale_before = (now or timezone.now()) - timedelta(days=settings.CITATIONS_REFRESH_DAYS)
    return papers_citations_due(limit=limit, source="s2", stale_before=stale_before)
