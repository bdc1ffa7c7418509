from __future__ import annotations

import pytest

from papers.models import Authorship

pytestmark = pytest.mark.django_db


def test_researcher_list_orders_by_papers_and_hides_merged(api, world, researcher_factory):
    researcher_factory("Merged Away", paper_count=99, merged_into=world["ada"])
    body = api.get("/api/v1/researchers/").json()
    assert [r["name"] for r in body["results"]] == ["Ada Lovelace", "Alan Turing"]
    assert set(body["results"][0]) >= {"id", "name", "paper_count", "h_index", "url", "api_url"}


def test_researcher_list_pages_through_ties(api, researcher_factory):
    made = [researcher_factory(f"Tied {i}", paper_count=3) for i in range(7)]
    seen, url = [], "/api/v1/researchers/?page_size=2"
    while url:
        body = api.get(url).json()
        seen += [r["id"] for r in body["results"]]
        url = body["next"]
    assert seen == sorted(r.pk for r in made)


def test_researcher_detail_shape(api, world):
    ada = world["ada"]
    ada.coauthors = [
        {"id": world["alan"].pk, "name": "Alan Turing", "slug": "alan-turing", "count": 2}
    ]
    ada.most_cited_paper = world["papers"][0]
    ada.save()
    response = api.get(f"/api/v1/researchers/{ada.pk}/")
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "Ada Lovelace" and body["h_index"] == 12
    assert body["external_ids"] == [{"source": "s2", "value": "1741101"}]
    assert body["most_cited_paper"]["arxiv_id"] == world["papers"][0].arxiv_id
    assert body["coauthors"][0]["url"].endswith(f"/researchers/{world['alan'].pk}-alan-turing")
    assert body["links"]["papers"].endswith(f"/api/v1/researchers/{ada.pk}/papers/")
    assert body["links"]["feed_rss"].endswith(f"/researchers/{ada.pk}/feed.rss")
    assert response["ETag"] and response["Last-Modified"]
    assert (
        api.get(f"/api/v1/researchers/{ada.pk}/", HTTP_IF_NONE_MATCH=response["ETag"]).status_code
        == 304
    )


def test_merged_researcher_redirects_to_the_final_survivor(api, world, researcher_factory):
    middle = researcher_factory("Ada Lovelace", merged_into=world["ada"])
    first = researcher_factory("A. Lovelace", merged_into=middle)
    for suffix in ("", "papers/", "same-name/"):
        response = api.get(f"/api/v1/researchers/{first.pk}/{suffix}?page_size=5")
        assert response.status_code == 301
        assert response["Location"] == (
            f"/api/v1/researchers/{world['ada'].pk}/{suffix}?page_size=5"
        )
    assert api.get(f"/api/v1/researchers/{first.pk}/", follow=True).json()["id"] == (
        world["ada"].pk
    )


def test_merge_cycle_is_404_not_a_loop(api, researcher_factory):
    a = researcher_factory("Loop A")
    b = researcher_factory("Loop B", merged_into=a)
    a.merged_into = b
    a.save()
    response = api.get(f"/api/v1/researchers/{a.pk}/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_unknown_researcher_is_404_everywhere(api, db):
    for suffix in ("", "papers/", "same-name/"):
        response = api.get(f"/api/v1/researchers/987654/{suffix}")
        assert response.status_code == 404
        assert response.json()["error"]["status"] == 404
    # Too many digits for an id is no route at all, still the JSON 404.
    assert api.get("/api/v1/researchers/99999999999999999999/").status_code == 404


def test_researcher_papers_newest_first(api, world):
    body = api.get(f"/api/v1/researchers/{world['alan'].pk}/papers/").json()
    assert [p["arxiv_id"] for p in body["results"]] == [
        world["papers"][0].arxiv_id,
        world["old"].arxiv_id,
    ]


def test_same_name_lists_other_records_with_the_name_key(api, world, researcher_factory):
    twin = researcher_factory("Ada  LOVELACE", paper_count=1)
    researcher_factory("Ada Lovelace", merged_into=world["ada"])
    researcher_factory("Ada Byron")
    body = api.get(f"/api/v1/researchers/{world['ada'].pk}/same-name/").json()
    assert [r["id"] for r in body["results"]] == [twin.pk]
    body = api.get(f"/api/v1/researchers/{twin.pk}/same-name/").json()
    assert [r["id"] for r in body["results"]] == [world["ada"].pk]


def test_researcher_search_by_name_prefix_ignores_case_and_accents(api, researcher_factory):
    erdos = researcher_factory("Paul Erdős", paper_count=40)
    researcher_factory("Paul Erdos", paper_count=3, merged_into=erdos)
    other = researcher_factory("Paula Erdmann", paper_count=1)
    body = api.get("/api/v1/search/researchers/", {"q": "paul ERDOS"}).json()
    assert [r["id"] for r in body["results"]] == [erdos.pk]
    body = api.get("/api/v1/search/researchers/", {"q": "Paul"}).json()
    assert [r["id"] for r in body["results"]] == [erdos.pk, other.pk]
    assert api.get("/api/v1/search/researchers/").status_code == 400
    assert api.get("/api/v1/search/researchers/", {"q": "!!!"}).json()["results"] == []


def test_researcher_queries_are_bounded(
    api, world, paper_factory, attach, django_assert_max_num_queries
):
    for _ in range(25):
        attach(paper_factory(), 1, world["ada"])
    with django_assert_max_num_queries(4):
        body = api.get(f"/api/v1/researchers/{world['ada'].pk}/papers/?page_size=30").json()
    assert len(body["results"]) == 30
    assert Authorship.objects.filter(researcher=world["ada"]).count() == 30
    with django_assert_max_num_queries(3):
        api.get(f"/api/v1/researchers/{world['ada'].pk}/")
