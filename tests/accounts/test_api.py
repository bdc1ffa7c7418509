"""/api/v1/me/follows/: list, follow, unfollow for the signed-in user (session or token)."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.follows import researcher_follow
from accounts.models import Follow

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(user_factory):
    user = user_factory()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    client.user = user
    return client


def test_anonymous_gets_401(researcher_factory):
    client = APIClient()
    assert client.get("/api/v1/me/follows/").status_code == 401
    r = researcher_factory()
    assert client.post("/api/v1/me/follows/", {"researcher": r.pk}).status_code == 401
    assert client.get("/api/v1/me/follows/", HTTP_AUTHORIZATION="Token nope").status_code == 401


def test_follow_list_unfollow_with_a_token(api, researcher_factory, user_factory):
    ada = researcher_factory("Ada Lovelace", paper_count=4)
    researcher_follow(user=user_factory(), researcher=researcher_factory("Not mine"))
    response = api.post("/api/v1/me/follows/", {"researcher": ada.pk}, format="json")
    assert response.status_code == 201
    assert response.json()["researcher"] == ada.pk and response.json()["name"] == "Ada Lovelace"
    assert api.post("/api/v1/me/follows/", {"researcher": ada.pk}, format="json").status_code == 200

    body = api.get("/api/v1/me/follows/").json()
    assert body["count"] == 1
    assert body["results"][0]["paper_count"] == 4
    assert body["results"][0]["url"].endswith(ada.get_absolute_url())

    assert api.delete(f"/api/v1/me/follows/{ada.pk}/").status_code == 204
    assert api.delete(f"/api/v1/me/follows/{ada.pk}/").status_code == 404
    assert not Follow.objects.filter(user=api.user).exists()


def test_bad_input_gets_clear_errors(api, researcher_factory):
    response = api.post("/api/v1/me/follows/", {"researcher": "x"}, format="json")
    assert response.status_code == 400
    assert "researcher" in response.json()["error"]["fields"]
    # What the schema's `integer` (JSON Schema 2020-12, OpenAPI 3.1) does not allow is refused,
    # not read as one: a string, a boolean, a fraction. 7.0 is an integer there: read as 7.
    for not_an_integer in ("7", True, 7.5):
        response = api.post("/api/v1/me/follows/", {"researcher": not_an_integer}, format="json")
        assert response.status_code == 400, not_an_integer
    seven = researcher_factory("Seven Point Oh")
    response = api.post("/api/v1/me/follows/", {"researcher": float(seven.pk)}, format="json")
    assert response.status_code == 201, response.content
    response = api.post("/api/v1/me/follows/", {"researcher": 999999}, format="json")
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "No researcher with this id."
    assert api.delete("/api/v1/me/follows/999999/").status_code == 404


def test_merged_record_follows_the_survivor(api, researcher_factory):
    survivor = researcher_factory("Dan Zhao")
    merged = researcher_factory("Dan Zhao", merged_into=survivor)
    response = api.post("/api/v1/me/follows/", {"researcher": merged.pk}, format="json")
    assert response.json()["researcher"] == survivor.pk


def test_session_auth_needs_csrf(user_factory, researcher_factory):
    user, ada = user_factory(), researcher_factory()
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.get("/api/v1/me/follows/").status_code == 200
    assert (
        client.post("/api/v1/me/follows/", {"researcher": ada.pk}, format="json").status_code == 403
    )
    assert not Follow.objects.exists()


def test_list_is_paged_with_bounded_queries(api, researcher_factory, django_assert_max_num_queries):
    for i in range(60):
        researcher_follow(user=api.user, researcher=researcher_factory(f"R {i}"))
    with django_assert_max_num_queries(4):  # token+user, count, page (researchers joined)
        body = api.get("/api/v1/me/follows/").json()
    assert body["count"] == 60 and len(body["results"]) == 50 and body["next"]


def test_page_number_must_be_a_whole_number_from_one(api, researcher_factory):
    researcher_follow(user=api.user, researcher=researcher_factory("R 1"))
    for page in ("", "0", "last", "1.5", "-1", "٢"):
        response = api.get("/api/v1/me/follows/", {"page": page})
        assert response.status_code == 400, page
        assert "page" in response.json()["error"]["fields"]
    assert api.get("/api/v1/me/follows/?page=1&page=1").status_code == 400
    assert api.get("/api/v1/me/follows/", {"page": "1"}).status_code == 200
    assert api.get("/api/v1/me/follows/", {"page": "2"}).status_code == 404
