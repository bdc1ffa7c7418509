"""The demo's citations (wovepaper.demo.citations): every edge and coverage line comes from a
recorded answer in wovepaper/demo/recordings/citations.json, for the archive's papers only."""

from __future__ import annotations

import json

import pytest

from papers.models import Citation, CitationCoverage
from wovepaper.demo.citations import demo_citations_load
from wovepaper.demo.replay import RECORDINGS

RECORDED = json.loads((RECORDINGS / "citations.json").read_text())


def _openalex(arxiv_id: str) -> dict:
    (record,) = [
        r
        for r in RECORDED["openalex_works"]
        if r["answer"]["doi"].lower() == f"https://doi.org/10.48550/arxiv.{arxiv_id}"
    ]
    return record


@pytest.mark.django_db
def test_recorded_references_and_citing_papers_are_loaded_for_archive_papers(paper_factory):
    vit = paper_factory(arxiv_id="2010.11929")
    attention = paper_factory(arxiv_id="1706.03762")
    turing_citations = [
        c["externalIds"]["ArXiv"] for c in RECORDED["semanticscholar_citing"][0]["citing"]
    ]
    citing = paper_factory(arxiv_id=turing_citations[0])

    summary = demo_citations_load()

    recorded = _openalex("2010.11929")
    refs = Citation.objects.filter(citing_paper=vit, source="openalex")
    assert refs.count() == len(recorded["answer"]["referenced_works"]) == 53
    assert sorted(refs.values_list("cited_openalex_id", flat=True)) == sorted(
        w.rsplit("/", 1)[1] for w in recorded["answer"]["referenced_works"]
    )
    coverage = CitationCoverage.objects.get(paper=vit, source="openalex")
    assert coverage.fetched_at.date().isoformat() == recorded["recorded"]
    assert coverage.counts_by_year == sorted(
        ([c["year"], c["cited_by_count"]] for c in recorded["answer"]["counts_by_year"]),
        reverse=True,
    )
    # OpenAlex lists no reference of "Attention Is All You Need": said, not left unknown.
    empty = CitationCoverage.objects.get(paper=attention, source="openalex")
    assert (empty.known, empty.references_listed) == (True, 0)
    # S2's list of the works citing "Computing Machinery and Intelligence" names this paper:
    # an edge from it to that work (outside the archive), and no coverage of its references.
    (edge,) = Citation.objects.filter(citing_paper=citing)
    assert (edge.source, edge.cited_doi, edge.cited_year) == (
        "s2",
        "10.1093/mind/lix.236.433",
        1950,
    )
    assert edge.cited_paper_id is None
    assert not CitationCoverage.objects.filter(paper=citing).exists()
    assert summary.citing_edges == 1 and summary.references == 53

    demo_citations_load()

    assert Citation.objects.count() == 54
