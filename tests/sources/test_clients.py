"""The API clients against recorded answers on a local server: parsing, batching, retries."""

from __future__ import annotations

import json
import time

import pytest
from werkzeug import Request, Response

from sources import openalex, semantic_scholar
from sources.openalex import OpenAlexClient
from sources.semantic_scholar import SemanticScholarClient
from tests.sources.conftest import load
from wovepaper.lib.http import RateLimiter, ServiceError, parse_retry_after


def test_parse_recorded_paper_batch_with_unknown_id():
    payload = load("semanticscholar/paper_batch_with_not_found.json")
    ids = [
        "ARXIV:0000.00000",
        "DOI:10.2139/ssrn.288970",
        "DOI:10.2139/ssrn.2250500",
        "DOI:10.1257/rct.1355",
    ]
    parsed = semantic_scholar.parse_paper_batch(ids, payload)
    assert parsed["ARXIV:0000.00000"] is None
    paper = parsed["DOI:10.2139/ssrn.2250500"]
    assert paper.paper_id == "cb1ebd913c3724c599f6b276b14b5c6253da68f3"
    assert paper.citation_count == 2185 and paper.arxiv_id is None
    assert [a.name for a in paper.authors] == [
        "E. Duflo",
        "A. Banerjee",
        "R. Glennerster",
        "Cynthia Kinnan",
    ]
    with pytest.raises(ValueError):
        semantic_scholar.parse_paper_batch(ids[:2], payload)


def test_parse_recorded_author_batches():
    full = load("semanticscholar/author_batch_full_fields.json")
    parsed = semantic_scholar.parse_author_batch([a["authorId"] for a in full], full)
    sommerville = parsed["1711844"]
    assert (sommerville.name, sommerville.h_index, sommerville.paper_count) == (
        "I. Sommerville",
        57,
        344,
    )
    assert sommerville.dblp == ("Ian Sommerville",)
    with_null = load("semanticscholar/author_batch_with_null.json")
    parsed = semantic_scholar.parse_author_batch(["0", "3234559", "1726629", "1711844"], with_null)
    assert parsed["0"] is None and parsed["3234559"].name == "E. Dijkstra"
    assert parsed["3234559"].h_index is None  # not asked for in that recording


def test_parse_recorded_openalex_work_and_authors():
    work = openalex.parse_work(load("openalex/work_W3188841554.json"))
    assert (work.work_id, work.arxiv_id, work.cited_by_count) == ("W3188841554", "2108.04680", 2)
    first = work.authorships[0]
    assert (first.author_id, first.display_name, first.raw_author_name, first.orcid) == (
        "A5009341822",
        "Jonathan C. Roberts",
        "J. C. Roberts",
        "0000-0001-7718-3181",
    )
    assert first.institutions[0].ror_id == "006jb1a24"
    assert first.institutions[0].type == "funder"  # a university typed funder, kept as given
    deleted = openalex.parse_author(load("openalex/author_A5317838346_deleted.json"))
    assert deleted.display_name == "Deleted Author" and deleted.works_count == 0


def test_folded_preprint_found_by_its_arxiv_location():
    page = load("openalex/works_from_publication_date_2023-01-01_page1.json")
    works = openalex.parse_works_page(page)
    found = openalex.works_by_arxiv_id(["2302.13971", "2207.02696", "2401.99999"], works)
    assert found["2302.13971"].work_id == "W4322718191"
    # YOLOv7 carries the CVPR DOI; its arXiv landing page identifies it.
    assert found["2207.02696"].work_id == "W4386076325"
    assert found["2401.99999"] is None
    assert openalex.clean_raw_author_name("None Rianti Simarmata") == "Rianti Simarmata"


@pytest.mark.django_db
def test_s2_client_sends_key_and_batches_by_arxiv_id(sources, clean_cache):
    with SemanticScholarClient() as client:
        found = client.papers_by_arxiv_id(["2302.13971", "2401.99999"])
    assert found["2401.99999"] is None
    assert found["2302.13971"].arxiv_id == "2302.13971"
    request, _ = sources.server.log[-1]
    assert request.headers["x-api-key"] == "test-key"
    assert json.loads(request.data) == {"ids": ["ARXIV:2302.13971", "ARXIV:2401.99999"]}
    assert request.args["fields"] == "externalIds,citationCount,authors"


@pytest.mark.django_db
def test_openalex_client_splits_or_filters_at_100(sources, clean_cache):
    ids = [f"2401.{n:05d}" for n in range(150)] + ["2302.13971"]
    with OpenAlexClient() as client:
        found = client.works_by_arxiv_id(ids)
    filters = [what for _, path, what in sources.requests if path.endswith("/works")]
    assert [f.count("|") + 1 for f in filters] == [100, 51]
    assert found["2302.13971"].work_id == "W4322718191"
    assert sum(1 for w in found.values() if w is None) == 150
    request, _ = sources.server.log[-1]
    assert request.args["mailto"] == "tests@wovepaper.example"


@pytest.mark.django_db
def test_429_with_retry_after_is_waited_for(api_settings, local_server, clean_cache):
    # No recording of a Semantic Scholar 429 exists; this envelope follows sources.md (c).
    local_server.expect_oneshot_request("/s2/paper/batch", "POST").respond_with_response(
        Response(
            json.dumps(
                {
                    "message": "Too Many Requests. Please wait and try again or apply "
                    "for a key for higher rate limits.",
                    "code": "429",
                }
            ),
            status=429,
            headers={"Retry-After": "1"},
            content_type="application/json",
        )
    )
    recorded = load("semanticscholar/paper_batch_fields_authors.json")
    local_server.expect_oneshot_request("/s2/paper/batch", "POST").respond_with_json(recorded)
    started = time.monotonic()
    with SemanticScholarClient() as client:
        found = client.papers_by_arxiv_id(["1111.11111", "2222.22222", "3333.33333"])
    elapsed = time.monotonic() - started
    assert elapsed >= 1.0  # the Retry-After second, not the 0.01 s backoff
    assert found["1111.11111"].authors[0].name == "Marianne Bertrand"
    assert len(local_server.log) == 2


@pytest.mark.django_db
def test_retry_after_beyond_the_limit_gives_up(api_settings, local_server, clean_cache):
    local_server.expect_request("/s2/author/batch", "POST").respond_with_response(
        Response("{}", status=429, headers={"Retry-After": "3600"})
    )
    with SemanticScholarClient() as client, pytest.raises(ServiceError, match="retry after 3600"):
        client.authors(["1711844"])
    assert len(local_server.log) == 1


@pytest.mark.django_db
def test_timeout_is_retried(api_settings, local_server, slow, clean_cache):
    api_settings.HTTP_TIMEOUT = 0.3
    recorded = load("semanticscholar/author_batch_with_null.json")
    slow("/s2/author/batch", "POST", 1.0, body=json.dumps(recorded))
    local_server.expect_oneshot_request("/s2/author/batch", "POST").respond_with_json(recorded)
    with SemanticScholarClient() as client:
        found = client.authors(["0", "3234559", "1726629", "1711844"])
    assert found["1726629"].name == "D. Parnas"
    assert len(local_server.log) >= 1  # the slow answer may land after the retry


@pytest.mark.django_db
def test_timeouts_every_time_raise_service_error(api_settings, local_server, clean_cache):
    api_settings.HTTP_TIMEOUT = 0.2

    def never_in_time(request: Request) -> Response:
        time.sleep(0.5)
        return Response("[]", content_type="application/json")

    local_server.expect_request("/s2/author/batch", "POST").respond_with_handler(never_in_time)
    with SemanticScholarClient() as client, pytest.raises(ServiceError, match="timed out"):
        client.authors(["1711844"])


@pytest.mark.django_db
def test_server_errors_are_retried_then_succeed(api_settings, local_server, clean_cache):
    local_server.expect_oneshot_request("/openalex/works").respond_with_data("busy", status=503)
    local_server.expect_oneshot_request("/openalex/works").respond_with_data("oops", status=502)
    page = load("openalex/works_from_publication_date_2023-01-01_page1.json")
    local_server.expect_oneshot_request("/openalex/works").respond_with_json(page)
    with OpenAlexClient() as client:
        found = client.works_by_arxiv_id(["2302.13971"])
    assert found["2302.13971"].work_id == "W4322718191"
    assert len(local_server.log) == 3


@pytest.mark.django_db
def test_recorded_400_is_an_error_without_retry(api_settings, local_server, clean_cache):
    body = load("semanticscholar/bad_query_parameters_400.json")
    local_server.expect_request("/s2/paper/batch", "POST").respond_with_json(body, status=400)
    with SemanticScholarClient() as client, pytest.raises(ServiceError, match="HTTP 400"):
        client.papers_by_arxiv_id(["2302.13971"])
    assert len(local_server.log) == 1


def test_parse_retry_after_forms():
    from datetime import UTC, datetime

    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("Thu, 01 Jan 2026 12:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_rate_limiter_spaces_requests_across_clients(clean_cache):
    # Two limiters for one service share the slots through the cache, as two workers would.
    first, second = RateLimiter("Example API", 5), RateLimiter("Example API", 5)
    started = time.time()
    stamps = []
    for i in range(8):
        (first if i % 2 else second).acquire()
        stamps.append(time.time())
    # 5 per second: request k, whichever client asks, never starts before slot k, 0.2 s apart.
    # (A loaded machine may wake a request late, which only moves it later; so the bound is
    # against the start, not between neighbours.) The first slot may have begun up to 0.2 s
    # before `started`.
    for k, stamp in enumerate(stamps):
        assert stamp - started >= (k - 1) * 0.2 - 0.005, (k, stamp - started)
    assert stamps[-1] - started >= 6 * 0.2 - 0.005


@pytest.mark.django_db
def test_openalex_works_whose_author_list_was_cut_are_asked_for_alone(
    api_settings, local_server, clean_cache
):
    """The only recorded work with `is_authors_truncated` (FinnGen, W4317390883) lists its first
    100 authors, and no full answer for it is recorded. So this test builds the list answer by
    cutting that real record further, to its first 20 authorships (still flagged truncated),
    and the single-work answer is the real record with its 100: the client must ask for the
    work alone, through the retry policy, and keep the longer list."""
    page = load("openalex/works_from_publication_date_2023-01-01_page1.json")
    real = next(w for w in page["results"] if w.get("is_authors_truncated"))
    cut = openalex.parse_work({**real, "authorships": real["authorships"][:20]})
    assert cut.authors_truncated and len(cut.authorships) == 20
    single = "/openalex/works/W4317390883"
    local_server.expect_oneshot_request(single).respond_with_data("busy", status=503)
    local_server.expect_oneshot_request(single).respond_with_json(real)
    with OpenAlexClient() as client:
        complete = client.complete_authors({"finngen": cut, "unknown": None})
    assert len(complete["finngen"].authorships) == 100
    assert complete["finngen"].authorships[:20] == cut.authorships
    assert complete["unknown"] is None
    request = local_server.log[-1][0]
    assert request.args["select"] == openalex.WORK_FIELDS
    assert len(local_server.log) == 2

    # A work OpenAlex no longer knows (merged meanwhile): the cut list is kept, nothing fails.
    local_server.expect_oneshot_request(single).respond_with_json({"error": "404"}, status=404)
    with OpenAlexClient() as client:
        assert client.complete_authors({"finngen": cut})["finngen"] is cut
