"""The OpenSearch backend against real OpenSearch answers served over HTTP from 127.0.0.1
(tests/fixtures/opensearch, recorded from clusters by the OpenSearch documentation; see
PROVENANCE.md): the requests it sends, and how it reads the answers. No cluster runs here, so
what a live cluster would rank is not tested; see docs/search.md."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from werkzeug import Request, Response

from papers.search import PAPERS, paper_search
from wovepaper.lib.search import Range, SearchQuery, Term, backend_for, reset_backends
from wovepaper.lib.search.opensearch import OpenSearchBackend, mappings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "opensearch"
SORTED_IDS = [3204, 3203, 3202, 3201, 3200, 3199, 3198, 3197, 3196, 3195]


def recorded(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.fixture
def cluster(settings, httpserver, db):
    settings.SEARCH_ENGINE = "opensearch"
    settings.OPENSEARCH_URL = httpserver.url_for("/")
    settings.OPENSEARCH_INDEX_PREFIX = "wovepaper"
    reset_backends()
    yield httpserver
    reset_backends()


def test_a_search_sends_one_query_and_reads_ids_and_total(cluster):
    cluster.expect_oneshot_request("/wovepaper-papers/_search", method="POST").respond_with_data(
        recorded("search_sorted.json"), content_type="application/json"
    )
    query = SearchQuery(
        text='spin "dark matter"',
        filters=(Term("categories", "hep-ph"), Range("published", gte=date(2020, 1, 1))),
        sort="newest",
        offset=40,
        limit=10,
    )
    page = backend_for(PAPERS).search(query)
    assert (page.items, page.total, page.total_is_capped) == (SORTED_IDS, 3205, False)
    assert page.scores == []  # a field sort: the answer's _score is null
    ((request, _),) = cluster.log
    body = json.loads(request.data)
    assert body["query"]["bool"]["must"] == [
        {
            "multi_match": {
                "query": "spin",
                "fields": ["title^2", "abstract^1", "authors^1"],
                "type": "phrase",
            }
        },
        {
            "multi_match": {
                "query": "dark matter",
                "fields": ["title^2", "abstract^1", "authors^1"],
                "type": "phrase",
            }
        },
    ]
    assert body["query"]["bool"]["filter"] == [
        {"term": {"categories": "hep-ph"}},
        {"range": {"published": {"gte": "2020-01-01T00:00:00+00:00"}}},
    ]
    assert body["sort"] == [
        {"published": {"order": "desc", "missing": "_last"}},
        {"id": {"order": "desc"}},
    ]
    assert (body["from"], body["size"], body["_source"]) == (40, 10, False)


def test_any_word_asks_for_one_of_the_clauses(cluster):
    backend = backend_for(PAPERS)
    assert isinstance(backend, OpenSearchBackend)
    body = backend.request_body(SearchQuery(text='spin "dark matter"', any_word=True))
    assert body is not None
    ((should,),) = [body["query"]["bool"]["must"]]
    assert should["bool"]["minimum_should_match"] == 1
    assert [c["multi_match"]["query"] for c in should["bool"]["should"]] == ["spin", "dark matter"]
    strict = backend.request_body(SearchQuery(text='spin "dark matter"'))
    assert strict is not None and len(strict["query"]["bool"]["must"]) == 2


def test_matching_asks_for_every_clause_among_the_ids_only(cluster):
    backend = backend_for(PAPERS)
    assert isinstance(backend, OpenSearchBackend)
    query = SearchQuery(text='spin "dark matter"', any_word=True, sort="newest", offset=40)
    body = backend.matching_body(query, [7, 9])
    assert body is not None
    assert len(body["query"]["bool"]["must"]) == 2  # every clause, not any one of them
    assert body["query"]["bool"]["filter"] == [{"ids": {"values": ["7", "9"]}}]
    assert (body["from"], body["size"], body["sort"]) == (0, 2, ["_score"])
    assert backend.matching_body(query, []) is None
    assert backend.matching(SearchQuery(text="spin"), []) == set()  # nothing sent
    assert cluster.log == []


def test_a_count_past_ten_thousand_is_more_than(cluster):
    cluster.expect_oneshot_request("/wovepaper-papers/_search", method="POST").respond_with_data(
        recorded("search_total_gte.json"), content_type="application/json"
    )
    page = backend_for(PAPERS).search(SearchQuery(text="quantum"))
    assert (page.items, page.total, page.total_is_capped) == ([], 10_000, True)


def test_the_selector_loads_the_papers_the_cluster_names(cluster, paper_factory):
    cluster.expect_oneshot_request("/wovepaper-papers/_search", method="POST").respond_with_data(
        recorded("search_sorted.json"), content_type="application/json"
    )
    found = paper_search("anything", sort="newest")
    # None of the recorded ids is a paper here: the page is empty, the total the cluster's.
    assert (found.items, found.total) == ([], 3205)


def test_nothing_to_look_for_sends_nothing(cluster):
    assert backend_for(PAPERS).search(SearchQuery(text='"" ()')).items == []
    assert cluster.log == []


def _bulk_lines(request: Request) -> list[dict]:
    return [json.loads(line) for line in request.get_data(as_text=True).splitlines() if line]


def test_index_sends_current_documents_and_deletes_in_one_bulk(cluster, paper_factory):
    live = paper_factory(
        title="Dark matter halos",
        categories=["astro-ph.CO", "hep-ph"],
        published=datetime(2021, 3, 4, tzinfo=UTC),
        cited_by_count=12,
    )
    gone = paper_factory(title="Withdrawn", is_deleted=True)
    cluster.expect_oneshot_request("/_bulk", method="POST").respond_with_data(
        recorded("bulk.json"), content_type="application/json"
    )
    # The recorded answer: a delete of an unknown id (404, not an error for us), then an index.
    written = backend_for(PAPERS).index([gone.pk, live.pk])
    assert written == 1
    ((request, _),) = cluster.log
    assert _bulk_lines(request) == [
        {"delete": {"_index": "wovepaper-papers", "_id": str(gone.pk)}},
        {"index": {"_index": "wovepaper-papers", "_id": str(live.pk)}},
        {
            "id": live.pk,
            "title": "Dark matter halos",
            "abstract": live.abstract,
            "authors": live.authors,
            "categories": ["astro-ph.CO", "hep-ph"],
            "published": "2021-03-04T00:00:00+00:00",
            "cited": 12,
        },
    ]


def test_rebuild_fills_a_new_index_then_moves_the_alias_onto_it(cluster, paper_factory):
    papers = [paper_factory(title=f"Paper {n}") for n in range(4)]
    answers = {
        ("PUT", None): "create_index.json",
        ("POST", "/_bulk"): "bulk.json",
        ("GET", "/_alias/wovepaper-papers"): "get_alias.json",
        ("POST", "/_aliases"): "acknowledged_aliases.json",
        ("DELETE", "/logs_20302801"): "acknowledged_delete_index.json",
    }

    def answer(request: Request) -> Response:
        key = (request.method, None if request.method == "PUT" else request.path)
        return Response(recorded(answers[key]), content_type="application/json")

    cluster.expect_request(re.compile(".*")).respond_with_handler(answer)
    backend = OpenSearchBackend(PAPERS, url=cluster.url_for("/"), prefix="wovepaper")
    # The recorded bulk answer has four items, the first a delete that found nothing: three
    # documents written, and the 404 is not an error.
    assert backend.rebuild() == 3
    requests = [request for request, _ in cluster.log]
    assert [r.method for r in requests] == ["PUT", "POST", "GET", "POST", "DELETE"]
    create, bulk, _, aliases, delete = requests
    new_index = create.path.lstrip("/")
    assert new_index.startswith("wovepaper-papers-")
    assert json.loads(create.data) == mappings(PAPERS)
    assert _bulk_lines(bulk)[::2] == [
        {"index": {"_index": new_index, "_id": str(paper.pk)}} for paper in papers
    ]
    # The index the recorded answer names is the one the alias leaves, then deleted.
    assert json.loads(aliases.data) == {
        "actions": [
            {"remove": {"index": "logs_20302801", "alias": "wovepaper-papers"}},
            {"add": {"index": new_index, "alias": "wovepaper-papers"}},
        ]
    }
    assert delete.path == "/logs_20302801"


def test_mappings_declare_every_field_with_its_analysis():
    properties = mappings(PAPERS)["mappings"]["properties"]
    assert properties == {
        "id": {"type": "long"},
        "title": {"type": "text", "analyzer": "wovepaper_text"},
        "abstract": {"type": "text", "analyzer": "wovepaper_text"},
        "authors": {"type": "text", "analyzer": "wovepaper_text"},
        "categories": {"type": "keyword"},
        "published": {"type": "date"},
        "cited": {"type": "long"},
    }
