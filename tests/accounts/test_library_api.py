"""/api/v1/me/lists/: the reader's lists, saved papers and notes (token or session)."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.library.lists import paper_save, reading_list_create
from accounts.library.models import ReadingList, SavedPaper
from accounts.library.notes import NOTE_MAX_CHARS

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(user_factory):
    user = user_factory()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    client.user = user
    return client


def test_anonymous_gets_401():
    client = APIClient()
    assert client.get("/api/v1/me/lists/").status_code == 401
    assert client.post("/api/v1/me/lists/", {"name": "x"}, format="json").status_code == 401
    assert client.get("/api/v1/me/lists/1/papers/").status_code == 401


def test_make_a_list_save_a_paper_write_a_note_and_remove_it(api, paper_factory):
    paper = paper_factory(title="Graph attention networks")
    made = api.post("/api/v1/me/lists/", {"name": "Graphs"}, format="json")
    assert made.status_code == 201
    body = made.json()
    assert body["name"] == "Graphs" and body["paper_count"] == 0 and body["shared"] is False
    assert body["share_url"] is None
    base = f"/api/v1/me/lists/{body['id']}/papers/"

    saved = api.post(base, {"arxiv_id": f"{paper.arxiv_id}v3", "note": "baseline"}, format="json")
    assert saved.status_code == 201
    assert saved.json()["arxiv_id"] == paper.arxiv_id and saved.json()["note"] == "baseline"
    again = api.post(base, {"arxiv_id": paper.arxiv_id}, format="json")
    assert again.status_code == 200 and again.json()["note"] == "baseline"

    page = api.get(base).json()
    assert page["count"] == 1 and page["results"][0]["title"] == "Graph attention networks"
    assert page["results"][0]["url"].endswith(paper.get_absolute_url())
    detail = f"{base}{paper.arxiv_id}/"
    changed = api.patch(detail, {"note": "read the appendix"}, format="json")
    assert changed.status_code == 200 and changed.json()["note_updated_at"]
    assert SavedPaper.objects.get().note == "read the appendix"
    assert api.get(f"/api/v1/me/lists/{body['id']}/").json()["paper_count"] == 1

    assert api.delete(detail).status_code == 204
    assert api.delete(detail).status_code == 404
    assert not SavedPaper.objects.exists()


def test_share_and_unshare_through_the_api(api):
    reading_list = reading_list_create(user=api.user, name="Share me")
    url = f"/api/v1/me/lists/{reading_list.pk}/"
    shared = api.patch(url, {"shared": True}, format="json").json()
    assert shared["shared"] is True and "/lists/shared/" in shared["share_url"]
    link = shared["share_url"].split("testserver", 1)[1]
    assert Client().get(link).status_code == 200
    private = api.patch(url, {"shared": False, "name": "Mine again"}, format="json").json()
    assert private["shared"] is False and private["name"] == "Mine again"
    assert Client().get(link).status_code == 404
    assert api.delete(url).status_code == 204
    assert not ReadingList.objects.filter(pk=reading_list.pk).exists()


def test_other_readers_lists_are_not_found(api, user_factory, paper_factory):
    owner = user_factory()
    paper = paper_factory()
    theirs = paper_save(user=owner, paper=paper).reading_list
    for method, url, data in [
        ("get", f"/api/v1/me/lists/{theirs.pk}/", None),
        ("patch", f"/api/v1/me/lists/{theirs.pk}/", {"shared": True}),
        ("delete", f"/api/v1/me/lists/{theirs.pk}/", None),
        ("get", f"/api/v1/me/lists/{theirs.pk}/papers/", None),
        ("post", f"/api/v1/me/lists/{theirs.pk}/papers/", {"arxiv_id": paper.arxiv_id}),
        ("patch", f"/api/v1/me/lists/{theirs.pk}/papers/{paper.arxiv_id}/", {"note": "x"}),
        ("delete", f"/api/v1/me/lists/{theirs.pk}/papers/{paper.arxiv_id}/", None),
    ]:
        response = getattr(api, method)(url, data, format="json")
        assert response.status_code == 404, (method, url)
    theirs.refresh_from_db()
    assert not theirs.share_token and SavedPaper.objects.get().note == ""


def test_bad_input_gets_clear_errors(api):
    reading_list = reading_list_create(user=api.user, name="Taken")
    assert api.post("/api/v1/me/lists/", {"name": "Taken"}, format="json").status_code == 409
    assert api.post("/api/v1/me/lists/", {"name": "   "}, format="json").status_code == 400
    assert api.post("/api/v1/me/lists/", {"name": 7}, format="json").status_code == 400
    base = f"/api/v1/me/lists/{reading_list.pk}/papers/"
    response = api.post(base, {"arxiv_id": "not an id"}, format="json")
    assert response.status_code == 400 and "arxiv_id" in response.json()["error"]["fields"]
    missing = api.post(base, {"arxiv_id": "2401.99999"}, format="json")
    assert missing.status_code == 404
    too_long = api.post(
        base,
        {"arxiv_id": "2401.99999", "note": "n" * (NOTE_MAX_CHARS + 1)},
        format="json",
    )
    assert too_long.status_code == 400


def test_a_session_works_too(user_factory, paper_factory):
    user = user_factory()
    client = APIClient()
    client.force_login(user)
    paper_save(user=user, paper=paper_factory())
    body = client.get("/api/v1/me/lists/").json()
    assert body["count"] == 1 and body["results"][0]["name"] == "Reading list"
    assert body["results"][0]["paper_count"] == 1


def test_the_library_endpoints_are_in_the_schema(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert set(paths["/api/v1/me/lists/"]) >= {"get", "post"}
    assert set(paths["/api/v1/me/lists/{list_id}/"]) >= {"get", "patch", "delete"}
    assert set(paths["/api/v1/me/lists/{list_id}/papers/"]) >= {"get", "post"}
    detail = paths["/api/v1/me/lists/{list_id}/papers/{arxiv_id}/"]
    assert set(detail) >= {"get", "patch", "delete"}
    assert "429" in detail["patch"]["responses"]
