from __future__ import annotations

import pytest

from researchers.institution_members import institutions_refresh

pytestmark = pytest.mark.django_db


def test_institution_detail_by_id_and_by_ror_id(api, world):
    cambridge = world["cambridge"]
    by_id = api.get(f"/api/v1/institutions/{cambridge.pk}/")
    by_ror = api.get("/api/v1/institutions/013meh722/")
    assert by_id.status_code == by_ror.status_code == 200
    assert by_id.json() == by_ror.json()
    body = by_id.json()
    assert body["name"] == "University of Cambridge"
    assert body["ror_url"] == "https://ror.org/013meh722"
    assert body["links"]["papers"].endswith(f"/api/v1/institutions/{cambridge.pk}/papers/")
    assert by_id["Last-Modified"]
    assert (
        api.get(
            f"/api/v1/institutions/{cambridge.pk}/", HTTP_IF_NONE_MATCH=by_id["ETag"]
        ).status_code
        == 304
    )


def test_unknown_institution_is_404(api, db):
    for path in (
        "/api/v1/institutions/424242/",
        "/api/v1/institutions/0abcdef12/",
        "/api/v1/institutions/424242/papers/",
        "/api/v1/institutions/424242/researchers/",
    ):
        response = api.get(path)
        assert response.status_code == 404, path
        assert response.json()["error"]["code"] == "not_found"


def test_institution_papers_and_researchers(api, world, researcher_factory, attach):
    cambridge = world["cambridge"]
    body = api.get("/api/v1/institutions/013meh722/papers/").json()
    assert [p["arxiv_id"] for p in body["results"]] == [
        world["papers"][1].arxiv_id,
        world["papers"][0].arxiv_id,
    ]
    attach(world["papers"][0], 2, None, cambridge)  # Alan, already matched, now at Cambridge
    merged = researcher_factory("Old Record", merged_into=world["ada"])
    institutions_refresh([cambridge.pk])  # as matching does after linking bylines
    body = api.get(f"/api/v1/institutions/{cambridge.pk}/researchers/").json()
    assert [r["id"] for r in body["results"]] == [world["ada"].pk, world["alan"].pk]
    assert merged.pk not in [r["id"] for r in body["results"]]


def test_institution_list_and_country_filter(api, institution_factory):
    mit = institution_factory(
        "Massachusetts Institute of Technology", country_code="US", paper_count=10
    )
    eth = institution_factory("ETH Zurich", country_code="CH", paper_count=20)
    body = api.get("/api/v1/institutions/").json()
    assert [i["id"] for i in body["results"]] == [eth.pk, mit.pk]
    body = api.get("/api/v1/institutions/", {"country": "us"}).json()
    assert [i["id"] for i in body["results"]] == [mit.pk]
    assert api.get("/api/v1/institutions/", {"country": "USA"}).status_code == 400


def test_institution_search_by_name_part_or_ror_id(api, world, institution_factory):
    institution_factory("Cambridge Crystallographic Data Centre", paper_count=1)
    body = api.get("/api/v1/search/institutions/", {"q": "cambridge"}).json()
    assert [i["name"] for i in body["results"]] == [
        "University of Cambridge",
        "Cambridge Crystallographic Data Centre",
    ]
    body = api.get("/api/v1/search/institutions/", {"q": "013meh722"}).json()
    assert [i["name"] for i in body["results"]] == ["University of Cambridge"]


def test_institution_and_search_queries_are_bounded(
    api, world, paper_factory, attach, django_assert_max_num_queries
):
    for _ in range(20):
        attach(paper_factory(), 1, world["ada"], world["cambridge"])
    with django_assert_max_num_queries(4):
        body = api.get("/api/v1/institutions/013meh722/papers/?page_size=30").json()
    assert len(body["results"]) == 22
    with django_assert_max_num_queries(2):
        api.get("/api/v1/institutions/013meh722/researchers/")
    with django_assert_max_num_queries(1):
        api.get("/api/v1/institutions/013meh722/")
    with django_assert_max_num_queries(1):
        api.get("/api/v1/search/institutions/", {"q": "cambridge"})
    with django_assert_max_num_queries(1):
        api.get("/api/v1/search/researchers/", {"q": "ada"})
    # The query's meaning (hybrid ranking's embedding lookup), the capped count, the ranked
    # page, the papers, their bylines and their analyses: six, whatever the number of matches.
    with django_assert_max_num_queries(6):
        body = api.get("/api/v1/search/papers/", {"q": "example", "page_size": 30}).json()
    assert len(body["results"]) == 25  # every paper here says "example"
