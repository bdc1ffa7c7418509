from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

pytestmark = pytest.mark.django_db


def arxiv_ids(response) -> list[str]:
    return [p["arxiv_id"] for p in response.json()["results"]]


def test_paper_list_is_newest_first_with_bylines(api, world):
    response = api.get("/api/v1/papers/")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"next", "previous", "results"}
    expected = [
        p.arxiv_id for p in sorted(world["papers"], key=lambda p: p.published, reverse=True)
    ]
    assert arxiv_ids(response) == expected
    first = body["results"][0]
    assert first["authors"][0]["name"] == "Ada Lovelace"
    assert first["authors"][0]["researcher"]["id"] == world["ada"].pk
    assert first["authors"][0]["researcher"]["api_url"].endswith(
        f"/api/v1/researchers/{world['ada'].pk}/"
    )
    assert first["authors"][1]["researcher"] is None
    assert first["url"].endswith(world["papers"][3].get_absolute_url())
    assert first["categories"] == ["stat.ML"]


def test_paper_list_filters_by_category_including_cross_lists(api, world):
    response = api.get("/api/v1/papers/", {"category": "stat.ML"})
    assert arxiv_ids(response) == [world["papers"][3].arxiv_id, world["papers"][1].arxiv_id]


def test_paper_list_filters_by_date_range_inclusive(api, world):
    response = api.get(
        "/api/v1/papers/", {"published_from": "2024-03-02", "published_to": "2024-03-03"}
    )
    assert arxiv_ids(response) == [world["papers"][2].arxiv_id, world["papers"][1].arxiv_id]
    response = api.get("/api/v1/papers/", {"category": "cs.LG", "published_to": "2024-03-01"})
    assert arxiv_ids(response) == [world["papers"][0].arxiv_id]


def test_paper_list_filters_by_researcher_and_institution(api, world):
    response = api.get("/api/v1/papers/", {"researcher": world["alan"].pk})
    assert arxiv_ids(response) == [world["papers"][0].arxiv_id, world["old"].arxiv_id]
    response = api.get("/api/v1/papers/", {"institution": world["cambridge"].pk})
    assert arxiv_ids(response) == [world["papers"][1].arxiv_id, world["papers"][0].arxiv_id]
    response = api.get(
        "/api/v1/papers/", {"institution": world["cambridge"].pk, "category": "stat.ML"}
    )
    assert arxiv_ids(response) == [world["papers"][1].arxiv_id]


@pytest.mark.parametrize(
    "params, field",
    [
        ({"published_from": "yesterday"}, "published_from"),
        ({"category": "cs.LG; drop table"}, "category"),
        ({"researcher": "abc"}, "researcher"),
        ({"page_size": "1000"}, "page_size"),
    ],
)
def test_paper_list_rejects_bad_parameters_with_the_error_body(api, world, params, field):
    response = api.get("/api/v1/papers/", params)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["status"] == 400 and error["code"] == "invalid"
    assert field in error["fields"]


def test_foreign_cursor_is_400_and_empty_range_is_empty(api, world):
    response = api.get("/api/v1/papers/", {"cursor": "not-a-cursor"})
    assert response.status_code == 400
    assert "cursor" in response.json()["error"]["fields"]
    response = api.get(
        "/api/v1/papers/", {"published_from": "2024-03-05", "published_to": "2024-03-01"}
    )
    assert response.status_code == 200 and response.json()["results"] == []


def test_cursor_pagination_walks_forward_and_back_without_gaps(api, paper_factory):
    # Ties on the publication date: the keyset must still give each paper exactly once.
    same_day = datetime(2024, 5, 1, tzinfo=UTC)
    made = [
        paper_factory(published=same_day if i % 2 else same_day - timedelta(days=i))
        for i in range(11)
    ]
    seen, pages, url = [], [], "/api/v1/papers/?page_size=3"
    while url:
        body = api.get(url).json()
        pages.append(body)
        seen.extend(p["arxiv_id"] for p in body["results"])
        url = body["next"]
    assert len(pages) == 4
    assert sorted(seen) == sorted(p.arxiv_id for p in made)
    assert len(seen) == len(set(seen))
    assert pages[0]["previous"] is None and pages[-1]["next"] is None
    back = api.get(pages[2]["previous"]).json()
    assert [p["arxiv_id"] for p in back["results"]] == [p["arxiv_id"] for p in pages[1]["results"]]


def test_paper_detail_new_style(api, world):
    paper = world["papers"][1]
    response = api.get(f"/api/v1/papers/{paper.arxiv_id}/")
    assert response.status_code == 200
    body = response.json()
    assert body["arxiv_id"] == paper.arxiv_id
    assert body["abstract"] == paper.abstract
    assert body["authors"][0]["institutions"][0]["ror_id"] == "013meh722"
    assert body["abs_url"] == f"https://arxiv.org/abs/{paper.arxiv_id}"


def test_paper_detail_old_style_id_with_slash_and_version(api, world):
    for path in (
        "/api/v1/papers/astro-ph/9901001/",
        "/api/v1/papers/astro-ph/9901001v2/",
        "/api/v1/papers/astro-ph%2F9901001/",
    ):
        response = api.get(path)
        assert response.status_code == 200, path
        assert response.json()["arxiv_id"] == "astro-ph/9901001"
        assert response.json()["api_url"].endswith("/api/v1/papers/astro-ph/9901001/")


def test_unknown_paper_is_404_with_the_error_body(api, db):
    response = api.get("/api/v1/papers/2401.99999/")
    assert response.status_code == 404
    assert response.json() == {
        "error": {"status": 404, "code": "not_found", "message": "No paper with that arXiv id."}
    }


def test_unknown_api_url_is_json_404_and_missing_slash_redirects(api, db):
    response = api.get("/api/v1/nothing-here/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    response = api.get("/api/v1/papers?category=cs.LG")
    assert response.status_code == 301
    assert response["Location"] == "/api/v1/papers/?category=cs.LG"


def test_paper_detail_etag_and_last_modified_give_304(api, world):
    url = f"/api/v1/papers/{world['papers'][0].arxiv_id}/"
    first = api.get(url)
    assert first["ETag"] and first["Last-Modified"]
    assert api.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    assert api.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 304
    world["papers"][0].title = "A changed title"
    world["papers"][0].save()
    changed = api.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200 and changed["ETag"] != first["ETag"]


def test_writes_are_refused(api, world):
    response = api.post("/api/v1/papers/", {}, format="json")
    assert response.status_code in (403, 405)
    assert response.json()["error"]["status"] == response.status_code


def test_paper_list_query_count_is_bounded(
    api, paper_factory, researcher_factory, attach, django_assert_max_num_queries
):
    researchers = [researcher_factory(f"Person {i}") for i in range(5)]
    for i in range(30):
        paper = paper_factory(authors=["A One", "B Two", "C Three"])
        attach(paper, 1, researchers[i % 5])
    with django_assert_max_num_queries(3):
        response = api.get("/api/v1/papers/?page_size=30")
    assert len(response.json()["results"]) == 30
    with django_assert_max_num_queries(5):
        api.get(f"/api/v1/papers/{paper.arxiv_id}/")


def test_paper_search_ranks_filters_and_pages(api, paper_factory):
    hits = [
        paper_factory(title=f"Graph neural networks, part {i}", categories=["cs.LG"])
        for i in range(5)
    ]
    paper_factory(title="Graph neural networks in physics", categories=["physics.comp-ph"])
    paper_factory(title="Nothing to see", abstract="Unrelated.")
    body = api.get("/api/v1/search/papers/", {"q": "graph neural", "page_size": 4}).json()
    assert body["count"] == 6 and body["count_is_capped"] is False
    assert len(body["results"]) == 4 and body["previous"] is None
    second = api.get(body["next"]).json()
    assert len(second["results"]) == 2 and second["next"] is None
    assert second["previous"] is not None
    seen = {p["arxiv_id"] for p in body["results"] + second["results"]}
    assert len(seen) == 6
    body = api.get(
        "/api/v1/search/papers/", {"q": "graph neural", "category": "cs.LG", "sort": "newest"}
    ).json()
    newest_first = sorted(hits, key=lambda p: (p.published, p.pk), reverse=True)
    assert [p["arxiv_id"] for p in body["results"]] == [p.arxiv_id for p in newest_first]
    assert api.get("/api/v1/search/papers/", {"q": "graph", "sort": "best"}).status_code == 400
    assert api.get("/api/v1/search/papers/", {"q": "   "}).json()["results"] == []
