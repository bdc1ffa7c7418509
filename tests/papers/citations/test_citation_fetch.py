"""Fetching citations from Semantic Scholar and OpenAlex over real HTTP, answered from
recordings: the Semantic Scholar paper object of "Computing Machinery and Intelligence" (14
references, 1,000 citing works, recorded 2024-06), the two pages of Semantic Scholar's
references endpoint for CorpusID:1033682 (156 references with influence, intents and contexts,
recorded 2023-12) and the OpenAlex work of arXiv 2108.04680 (49 referenced works, counts by
year). See tests/fixtures/README.md."""

from __future__ import annotations

import copy
import json
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from werkzeug import Request, Response

from papers.citations.fetch import (
    REFERENCES_REJECTED_SOURCE,
    citation_papers_due,
    citations_fetch,
)
from papers.citations.load import CitingPaperEdges, citations_load
from papers.models import Citation, CitationCoverage, RejectedRecord
from sources.citation_answers import CitedWork, s2_reference_page
from sources.semantic_scholar import (
    CITATION_FIELDS,
    REFERENCE_FIELDS,
    REFERENCES_PAGE_SIZE,
)
from tests.sources.conftest import load

FETCHED = datetime(2026, 11, 12, tzinfo=UTC)
TURING = load("semanticscholar/paper_doi_full_fields_with_authors.json")
OPENALEX_WORK = load("openalex/work_W3188841554.json")  # arXiv 2108.04680
# The references endpoint's two pages (offset 0 with `next` 100; offset 100, the last), as asked
# by the recording's id form, CorpusID:1033682 (S2 takes it wherever it takes its own id).
REFERENCES_KEY = "CorpusID:1033682"
REFERENCES_PATH = f"/s2/paper/{REFERENCES_KEY}/references"
REFERENCE_PAGES = {
    page["offset"]: page
    for page in (
        load("semanticscholar/paper_references_corpusid_1033682.0.json"),
        load("semanticscholar/paper_references_corpusid_1033682.1.json"),
    )
}


class Recorded:
    """S2's paper batch and OpenAlex's works list, answered from the recordings: S2 knows the
    Turing paper by its own id (which is how the client asks for a matched paper), and nothing
    else; OpenAlex knows the recorded work by its arXiv DOI."""

    def __init__(self):
        self.s2_requests: list[tuple[dict, list[str]]] = []
        self.openalex_requests: list[dict] = []
        self.reference_requests: list[dict] = []
        self.reference_pages = dict(REFERENCE_PAGES)

    def s2_references(self, request: Request) -> Response:
        """The recorded page at the asked offset (the recording's pages are of 100, whatever
        limit is asked; the client follows `next`, so it asks the offsets the pages name)."""
        self.reference_requests.append(dict(request.args))
        page = self.reference_pages[int(request.args["offset"])]
        return Response(json.dumps(page), content_type="application/json")

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
def recorded(api_settings, local_server, clean_cache, settings) -> Recorded:
    served = Recorded()
    local_server.expect_request("/s2/paper/batch", "POST").respond_with_handler(served.s2_batch)
    local_server.expect_request(REFERENCES_PATH, "GET").respond_with_handler(served.s2_references)
    local_server.expect_request("/openalex/works", "GET").respond_with_handler(
        served.openalex_works
    )
    # No recording of the Turing paper's references endpoint exists: the tests that ask the
    # endpoint raise the budget and ask it of the recorded paper only.
    settings.CITATIONS_S2_REFERENCES_PER_BATCH = 0
    return served


@pytest.fixture
def detailed(paper_factory, settings):
    """The archive's row for the paper whose references endpoint was recorded: its S2 id the
    recording's request id, its arXiv id made up (none is in the recording) and never asked."""
    settings.CITATIONS_S2_REFERENCES_PER_BATCH = 1
    return paper_factory(arxiv_id="2401.99998", semantic_scholar_id=REFERENCES_KEY)


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
    assert "(S2's references endpoint): 0 papers, 0 malformed items set aside." in out
    assert Citation.objects.filter(citing_paper=paper).count() == 49


def test_beat_asks_for_the_next_batch_due_on_the_match_queue(settings):
    from wovepaper.celery import app

    app.loader.import_default_modules()  # as a worker does: papers.tasks is autodiscovered
    entry = settings.CELERY_BEAT_SCHEDULE["fetch-citations"]
    assert entry["task"] in app.tasks
    assert entry["kwargs"] == {"limit": settings.MATCH_BATCH_SIZE}
    assert entry["schedule"] == float(settings.CITATIONS_FETCH_SECONDS) > 0
    route = settings.CELERY_TASK_ROUTES[entry["task"]]
    assert route["queue"].endswith("match")


@pytest.mark.django_db
def test_the_references_endpoint_gives_influence_intents_and_contexts(recorded, detailed):
    result = citations_fetch([detailed.pk], now=FETCHED)

    assert (result.errors, result.detail_errors, result.detailed) == ([], [], 1)
    edges = Citation.objects.filter(citing_paper=detailed, source="s2")
    assert edges.count() == result.edges == 156
    influential = edges.get(is_influential=True)
    assert (influential.cited_arxiv_id, influential.cited_title) == (
        "1411.1784",
        "Conditional Generative Adversarial Nets",
    )
    assert edges.filter(is_influential=False).count() == 155
    assert edges.exclude(contexts=[]).count() == 36
    assert list(edges.exclude(intents=[]).values_list("intents", flat=True)) == [["background"]]
    coverage = CitationCoverage.objects.get(paper=detailed, source="s2")
    assert (coverage.known, coverage.references_listed) == (True, 156)
    assert coverage.references_detailed_at == FETCHED
    # Both pages, following `next`, each asked with the edge's and the cited paper's fields.
    assert [r["offset"] for r in recorded.reference_requests] == ["0", "100"]
    assert {r["fields"] for r in recorded.reference_requests} == {REFERENCE_FIELDS}
    assert {r["limit"] for r in recorded.reference_requests} == {str(REFERENCES_PAGE_SIZE)}


def _without_detail(works: list[CitedWork]) -> list[CitedWork]:
    return [
        CitedWork(
            arxiv_id=w.arxiv_id,
            doi=w.doi,
            s2_id=w.s2_id,
            title=w.title,
            year=w.year,
            citation_count=w.citation_count,
        )
        for w in works
    ]


@pytest.mark.django_db
def test_the_endpoints_rows_replace_the_batchs_and_a_refetch_changes_nothing(recorded, detailed):
    # The paper's S2 edges as a batch answer gives them: the same works, without the details.
    listed = [w for page in REFERENCE_PAGES.values() for w in s2_reference_page(page)]
    earlier = FETCHED - timedelta(days=40)
    citations_load([CitingPaperEdges(detailed.pk, "s2", earlier, _without_detail(listed))])
    assert not Citation.objects.filter(citing_paper=detailed).exclude(contexts=[]).exists()
    keys = set(Citation.objects.filter(citing_paper=detailed).values_list("cited_key", flat=True))

    citations_fetch([detailed.pk], now=FETCHED)
    citations_fetch([detailed.pk], now=FETCHED)

    edges = Citation.objects.filter(citing_paper=detailed, source="s2")
    assert set(edges.values_list("cited_key", flat=True)) == keys
    assert edges.count() == 156
    assert not edges.filter(fetched_at=earlier).exists()
    assert edges.exclude(contexts=[]).count() == 36


@pytest.mark.django_db
def test_a_paper_not_asked_this_time_keeps_the_endpoints_edges(recorded, detailed, settings):
    citations_fetch([detailed.pk], now=FETCHED)
    settings.CITATIONS_S2_REFERENCES_PER_BATCH = 0

    citations_fetch([detailed.pk], now=FETCHED + timedelta(days=31))

    edges = Citation.objects.filter(citing_paper=detailed, source="s2")
    assert edges.count() == 156 and edges.exclude(contexts=[]).count() == 36
    coverage = CitationCoverage.objects.get(paper=detailed, source="s2")
    assert coverage.references_detailed_at == FETCHED


@pytest.mark.django_db
def test_the_budget_goes_to_the_most_cited_paper_s2_knows(
    recorded, detailed, turing, paper_factory
):
    detailed.cited_by_count = 3000
    detailed.save(update_fields=["cited_by_count"])
    turing.cited_by_count = 20
    turing.save(update_fields=["cited_by_count"])
    unknown = paper_factory(arxiv_id="2108.04680")  # no S2 id, and the batch answers null

    result = citations_fetch([turing.pk, detailed.pk, unknown.pk], now=FETCHED)

    assert result.detailed == 1 and result.detail_errors == []
    assert Citation.objects.filter(citing_paper=detailed, source="s2").count() == 156
    # Turing's references are the batch's (no influence said), the endpoint never asked for it.
    assert set(
        Citation.objects.filter(citing_paper=turing, source="s2").values_list(
            "is_influential", flat=True
        )
    ) == {None}
    assert CitationCoverage.objects.get(paper=turing, source="s2").references_detailed_at is None


@pytest.mark.django_db
def test_the_references_endpoint_honours_retry_after(recorded, local_server, detailed):
    # No recording of a Semantic Scholar 429 exists; this envelope follows sources.md (c).
    local_server.clear()
    local_server.expect_oneshot_request(REFERENCES_PATH, "GET").respond_with_response(
        Response(
            json.dumps({"message": "Too Many Requests.", "code": "429"}),
            status=429,
            headers={"Retry-After": "1"},
            content_type="application/json",
        )
    )
    local_server.expect_request(REFERENCES_PATH, "GET").respond_with_handler(recorded.s2_references)
    local_server.expect_request("/s2/paper/batch", "POST").respond_with_handler(recorded.s2_batch)
    local_server.expect_request("/openalex/works", "GET").respond_with_handler(
        recorded.openalex_works
    )

    started = time.monotonic()
    result = citations_fetch([detailed.pk], now=FETCHED)

    assert time.monotonic() - started >= 1
    assert (result.detail_errors, result.detailed) == ([], 1)
    assert Citation.objects.filter(citing_paper=detailed, source="s2").count() == 156


@pytest.mark.django_db
def test_a_malformed_reference_is_set_aside_with_its_id_and_reason(recorded, detailed):
    # Written for the test from the recorded page: one item's isInfluential is not a boolean.
    page = copy.deepcopy(REFERENCE_PAGES[100])
    broken = page["data"][3]
    broken["isInfluential"] = "yes"
    recorded.reference_pages[100] = page

    result = citations_fetch([detailed.pk], now=FETCHED)

    assert (result.set_aside, result.detailed) == (1, 1)
    assert Citation.objects.filter(citing_paper=detailed, source="s2").count() == 155
    rejected = RejectedRecord.objects.get(source=REFERENCES_REJECTED_SOURCE)
    assert '"isInfluential": "yes"' in rejected.raw
    assert rejected.record_key == f"2401.99998 {broken['citedPaper']['paperId']}"
    assert "isInfluential" in rejected.reason
    # A rerun updates the same record.
    citations_fetch([detailed.pk], now=FETCHED)
    assert RejectedRecord.objects.filter(source=REFERENCES_REJECTED_SOURCE).count() == 1
