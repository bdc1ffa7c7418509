"""Fetching citations from Semantic Scholar and OpenAlex over real HTTP, answered from
recordings: the Semantic Scholar paper object of "Computing Machinery and Intelligence" (14
references, 1,000 citing works, recorded 2024-06) and the OpenAlex work of arXiv 2108.04680
(49 referenced works, counts by year). See tests/fixtures/README.md."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from werkzeug import Request, Response

from papers.models import Citation, CitationCoverage
from researchers.citation_fetch import citation_papers_due, citations_fetch
from researchers.clients.semantic_scholar import CITATION_FIELDS

from .conftest import load

FETCHED = datetime(2026, 11, 12, tzinfo=UTC)
TURING = load("semanticscholar/paper_doi_full_fields_with_authors.json")
OPENALEX_WORK = load("openalex/work_W3188841554.json")  # arXiv 2108.04680


class Recorded:
    """S2's paper batch and OpenAlex's works list, answered from the recordings: S2 knows the
    Turing paper by its own id (which is how the client asks for a matched paper), and nothing
    else; OpenAlex knows the recorded work by its arXiv DOI."""

    def __init__(self):
        self.s2_requests: list[tuple[dict, list[str]]] = []
        self.openalex_requests: list[dict] = []

    def s2_batch(self, request: Request) -> Response:
        ids = request.get_json()["ids"]
        self.s2_requests.append((dict(request.args), ids))
        body = [TURING if key == TURING["paperId"] else None for key in ids]
        return Response(json.dumps(body), content_type="application/json")

    def openalex_works(self, request: Request) -> Response:
        self.openalex_requests.append(dict(request.args))
        dois = {f"https://doi.org/{d}" for d in request.args["filter"][4:].split("|")}
        results = [OPENALEX_WORK] if OPENALEX_WORK["doi"].lower() in dois else []
        meta = {"count": len(results), "db_response_time_ms": 21, "page": 1, "per_page": 100}
        return Response(
            json.dumps({"meta": meta, "results": results, "group_by": []}),
            content_type="application/json",
        )


@pytest.fixture
def recorded(api_settings, local_server, clean_cache) -> Recorded:
    served = Recorded()
    local_server.expect_request("/s2/paper/batch", "POST").respond_with_handler(served.s2_batch)
    local_server.expect_request("/openalex/works", "GET").respond_with_handler(
        served.openalex_works
    )
    return served


@pytest.fixture
def turing(paper_factory):
    """The archive's row for the recorded S2 paper: its id is the recording's, its arXiv id
    made up (the paper has none, and no request carries it: S2 is asked by its own id), one
    arXiv never gave (the factory's could be a real paper citing it)."""
    return paper_factory(
        arxiv_id="2401.99999",
        title=TURING["title"],
        semantic_scholar_id=TURING["paperId"],
        doi="10.1093/mind/lix.236.433",
    )


def _citing_arxiv_ids(n: int) -> list[str]:
    return [
        c["externalIds"]["ArXiv"]
        for c in TURING["citations"]
        if (c["externalIds"] or {}).get("ArXiv")
    ][:n]


@pytest.mark.django_db
def test_s2_references_and_archive_papers_citing_it_are_written(recorded, turing, paper_factory):
    citing = [paper_factory(arxiv_id=a) for a in _citing_arxiv_ids(3)]

    result = citations_fetch([turing.pk], now=FETCHED)

    assert result.errors == []
    assert result.edges == 14
    references = Citation.objects.filter(citing_paper=turing, source="s2")
    assert references.count() == 14
    assert references.filter(cited_doi="10.2307/3610576", cited_year=1951).exists()
    cited_by = Citation.objects.filter(cited_paper=turing, source="s2")
    assert sorted(cited_by.values_list("citing_paper_id", flat=True)) == sorted(
        p.pk for p in citing
    )
    coverage = CitationCoverage.objects.get(paper=turing, source="s2")
    assert (coverage.known, coverage.references_listed, coverage.fetched_at) == (True, 14, FETCHED)
    assert coverage.cited_by_count == TURING["citationCount"]
    params, ids = recorded.s2_requests[0]
    assert ids == [TURING["paperId"]]
    assert params["fields"] == CITATION_FIELDS
    assert "references.externalIds" in params["fields"]


@pytest.mark.django_db
def test_openalex_referenced_works_and_counts_by_year_are_written(recorded, paper_factory):
    paper = paper_factory(arxiv_id="2108.04680")

    result = citations_fetch([paper.pk], now=FETCHED)

    assert Citation.objects.filter(citing_paper=paper, source="openalex").count() == 49
    coverage = CitationCoverage.objects.get(paper=paper, source="openalex")
    assert coverage.counts_by_year == [[2023, 2]]
    assert coverage.references_listed == 49
    assert recorded.openalex_requests[0]["filter"] == "doi:10.48550/arxiv.2108.04680"
    assert "referenced_works" in recorded.openalex_requests[0]["select"]
    # S2 was asked by arXiv id (the paper has no S2 id) and answered null: unknown, no edge.
    assert recorded.s2_requests[0][1] == ["ARXIV:2108.04680"]
    assert CitationCoverage.objects.get(paper=paper, source="s2").known is False
    assert result.unknown == {"s2": 1, "openalex": 0}


@pytest.mark.django_db
def test_a_refetch_replaces_edges_without_duplicates(recorded, turing, paper_factory):
    paper_factory(arxiv_id=_citing_arxiv_ids(1)[0])
    citations_fetch([turing.pk], now=FETCHED)
    first = set(Citation.objects.values_list("citing_paper_id", "cited_key", "source"))

    later = FETCHED + timedelta(days=40)
    citations_fetch([turing.pk], now=later)

    assert set(Citation.objects.values_list("citing_paper_id", "cited_key", "source")) == first
    assert Citation.objects.filter(citing_paper=turing, fetched_at=later).count() == 14
    assert CitationCoverage.objects.get(paper=turing, source="s2").fetched_at == later


@pytest.mark.django_db
def test_retry_after_is_honoured(recorded, local_server, turing):
    local_server.clear()
    # No recording of a Semantic Scholar 429 exists; this envelope follows sources.md (c).
    local_server.expect_oneshot_request("/s2/paper/batch", "POST").respond_with_response(
        Response(
            json.dumps({"message": "Too Many Requests.", "code": "429"}),
            status=429,
            headers={"Retry-After": "1"},
            content_type="application/json",
        )
    )
    local_server.expect_request("/s2/paper/batch", "POST").respond_with_handler(recorded.s2_batch)
    local_server.expect_request("/openalex/works", "GET").respond_with_handler(
        recorded.openalex_works
    )

    result = citations_fetch([turing.pk], now=FETCHED)

    assert result.errors == []
    assert Citation.objects.filter(citing_paper=turing, source="s2").count() == 14


@pytest.mark.django_db
def test_a_source_that_cannot_answer_changes_nothing_of_its_own(
    recorded, local_server, turing, paper_factory
):
    citations_fetch([turing.pk], now=FETCHED)
    local_server.clear()
    local_server.expect_request("/s2/paper/batch", "POST").respond_with_response(
        Response("Bad Gateway", status=502)  # written for the test: no recorded 502 exists
    )
    local_server.expect_request("/openalex/works", "GET").respond_with_handler(
        recorded.openalex_works
    )
    paper = paper_factory(arxiv_id="2108.04680")

    result = citations_fetch([turing.pk, paper.pk], now=FETCHED + timedelta(days=1))

    assert result.failed and "Semantic Scholar" in result.errors[0]
    assert (
        Citation.objects.filter(citing_paper=turing, source="s2", fetched_at=FETCHED).count() == 14
    )
    assert not CitationCoverage.objects.filter(paper=paper, source="s2").exists()
    assert Citation.objects.filter(citing_paper=paper, source="openalex").count() == 49


@pytest.mark.django_db
def test_papers_due_are_the_never_asked_newest_first_then_the_stalest(recorded, paper_factory):
    old = paper_factory(published=datetime(2020, 1, 1, tzinfo=UTC))
    new = paper_factory(published=datetime(2024, 6, 1, tzinfo=UTC))
    asked = paper_factory(published=datetime(2025, 1, 1, tzinfo=UTC))
    citations_fetch([asked.pk], now=FETCHED)

    assert citation_papers_due(limit=5, now=FETCHED) == [new.pk, old.pk]
    assert citation_papers_due(limit=5, now=FETCHED + timedelta(days=31)) == [
        new.pk,
        old.pk,
        asked.pk,
    ]


@pytest.mark.django_db
def test_command_fetches_the_named_papers(recorded, turing, paper_factory, capsys):
    paper = paper_factory(arxiv_id="2108.04680")

    call_command("fetch_citations", arxiv_id=["2108.04680", turing.arxiv_id])

    out = capsys.readouterr().out
    assert "Fetched citations of 2 papers: 63 references" in out
    assert Citation.objects.filter(citing_paper=paper).count() == 49


def test_beat_asks_for_the_next_batch_due_on_the_match_queue(settings):
    from wovepaper.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["fetch-citations"]
    assert entry["task"] in app.tasks
    assert entry["kwargs"] == {"limit": settings.MATCH_BATCH_SIZE}
    assert entry["schedule"] == float(settings.CITATIONS_FETCH_SECONDS) > 0
    route = settings.CELERY_TASK_ROUTES[entry["task"]]
    assert route["queue"].endswith("match")
