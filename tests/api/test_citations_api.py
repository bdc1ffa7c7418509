"""The citation endpoints, over recorded Semantic Scholar and OpenAlex answers loaded as the
fetch loads them: a paper's references and the archive's papers citing it, cursor paged."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from papers.citations.load import CitingPaperEdges, citations_load, citing_works_load
from sources.citation_answers import CitedWork, openalex_referenced_works, s2_references

pytestmark = pytest.mark.django_db
FETCHED = datetime(2026, 11, 12, tzinfo=UTC)


@pytest.fixture
def cited_world(paper_factory, fixtures_dir):
    turing = json.loads(
        (fixtures_dir / "semanticscholar" / "paper_doi_full_fields_with_authors.json").read_text()
    )
    work = json.loads((fixtures_dir / "openalex" / "work_W3188841554.json").read_text())
    cited = paper_factory(title="The cited one")
    paper = paper_factory(title="The citing one")
    citations_load(
        [
            CitingPaperEdges(
                paper.pk,
                "s2",
                FETCHED,
                [*s2_references(turing), CitedWork(arxiv_id=cited.arxiv_id)],
            ),
            CitingPaperEdges(paper.pk, "openalex", FETCHED, openalex_referenced_works(work)),
        ]
    )
    return {"paper": paper, "cited": cited}


def test_references_are_paged_with_cursors_and_filtered_by_source(api, cited_world):
    paper = cited_world["paper"]
    url = f"/api/v1/papers/{paper.arxiv_id}/references/"

    first = api.get(url, {"page_size": 10}).json()
    items = list(first["results"])
    next_url = first["next"]
    while next_url:
        page = api.get(next_url).json()
        items += page["results"]
        next_url = page["next"]

    assert len(items) == 15 + 49
    assert len({(i["source"], i["link"], i["title"]) for i in items}) == 64  # no repeat
    hartree = next(i for i in items if i["title"] == "Calculating Instruments and Machines")
    assert (hartree["doi"], hartree["year"], hartree["citation_count"]) == (
        "10.2307/3610576",
        1951,
        112,
    )
    assert hartree["paper"] is None and hartree["is_influential"] is None
    assert hartree["fetched_at"] == "2026-11-12T00:00:00Z"
    resolved = next(i for i in items if i["paper"])
    assert resolved["paper"]["arxiv_id"] == cited_world["cited"].arxiv_id
    assert resolved["paper"]["api_url"].endswith(f"/api/v1/papers/{resolved['arxiv_id']}/")
    openalex = api.get(url, {"source": "openalex", "page_size": 100}).json()["results"]
    assert len(openalex) == 49 and all(i["title"] == "" for i in openalex)
    assert openalex[0]["link"].startswith("https://openalex.org/W")
    assert api.get(url, {"source": "google"}).status_code == 400


def test_citations_list_the_archive_papers_citing_it(api, cited_world, paper_factory):
    cited = cited_world["cited"]
    other = paper_factory(title="Another citing one")
    citing_works_load(
        cited_paper_id=cited.pk,
        source="s2",
        fetched_at=FETCHED,
        citing_works=[CitedWork(arxiv_id=other.arxiv_id)],
    )

    body = api.get(f"/api/v1/papers/{cited.arxiv_id}/citations/").json()

    assert {i["paper"]["title"] for i in body["results"]} == {
        "The citing one",
        "Another citing one",
    }
    assert {i["source"] for i in body["results"]} == {"s2"}
    assert api.get("/api/v1/papers/2401.99999/citations/").status_code == 404


def test_endpoints_are_in_the_schema(api):
    paths = api.get("/openapi.json").json()["paths"]
    for name in ("references", "citations"):
        operation = paths[f"/api/v1/papers/{{arxiv_id}}/{name}/"]["get"]
        assert {p["name"] for p in operation["parameters"]} >= {
            "arxiv_id",
            "cursor",
            "page_size",
            "source",
        }
        assert operation["operationId"] == f"papers_{name}"
