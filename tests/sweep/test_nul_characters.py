"""One rule for NUL characters from a request (wovepaper.middleware.ControlCharacterMiddleware):
refused with 400 wherever they come, in a form field, a JSON body or a query parameter, before a
view can hand them to PostgreSQL (which answers a DataError: a 500). Swept over every route of
the project that takes no argument, and over every form the site posts."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from chat.models import Conversation

PROJECT = ("wovepaper", "papers", "researchers", "institutions", "accounts", "chat")


def _plain_routes(patterns, prefix=""):
    """Paths of the project's routes whose pattern takes no argument."""
    for entry in patterns:
        pattern = str(entry.pattern)
        if isinstance(entry, URLResolver):
            if "<" not in pattern and "(" not in pattern and "^" not in pattern:
                yield from _plain_routes(entry.url_patterns, prefix + pattern)
        elif isinstance(entry, URLPattern):
            module = getattr(entry.callback, "__module__", "") or ""
            if module.split(".")[0] in PROJECT and "<" not in pattern and "^" not in pattern:
                yield "/" + prefix + pattern


@pytest.fixture
def reader(db):
    user = get_user_model().objects.create_user("nul", "nul@example.org", "pw-nul-12345")
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return user, client


def test_every_plain_route_refuses_a_nul_in_its_query(reader):
    _, client = reader
    routes = sorted(set(_plain_routes(get_resolver().url_patterns)))
    assert {"/search", "/researchers", "/institutions", "/chat", "/health"} <= set(routes)
    answers = {
        path: client.get(path, {"q": "a\x00b", "country": "\x00"}).status_code for path in routes
    }
    assert {path: code for path, code in answers.items() if code != 400} == {}


def test_every_form_the_site_posts_refuses_a_nul(reader):
    user, client = reader
    conversation = Conversation.objects.create(user=user, title="A conversation")
    posts = {
        "/chat/ask": {"question": "what is \x00 here", "scope": ""},
        "/chat/ask?scope": {"question": "fine", "scope": "paper:0704.0001\x00"},
        f"/chat/{conversation.pk}/rename": {"title": "new\x00title"},
        "/researchers/report": {"kind": "wrong_person", "message": "\x00"},
        "/accounts/": {"digest_frequency": "daily\x00"},
        "/accounts/signup/": {"email": "x\x00@example.org", "password1": "p", "password2": "p"},
        "/accounts/login/": {"login": "nul@example.org\x00", "password": "pw"},
    }
    answers = {path: client.post(path, data).status_code for path, data in posts.items()}
    assert answers == dict.fromkeys(posts, 400)
    conversation.refresh_from_db()
    assert conversation.title == "A conversation"


def test_the_api_refuses_a_nul_in_json_with_its_error_shape(reader):
    user, client = reader
    conversation = Conversation.objects.create(user=user, title="A conversation")
    for method, path, body in [
        ("post", "/api/v1/me/conversations/", {"question": "what\x00", "scope": ""}),
        ("patch", f"/api/v1/me/conversations/{conversation.pk}/", {"title": "x\x00"}),
    ]:
        response = getattr(client, method)(path, json.dumps(body), content_type="application/json")
        assert response.status_code == 400, path
        assert response.json()["error"]["code"] == "invalid"
    assert client.get("/api/v1/search/papers/", {"q": "\x00"}).status_code == 400


def test_a_file_may_hold_any_bytes(reader):
    user, client = reader
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("library.bib", b"@article{a,\x00}")
    # Not refused by the rule (a file's bytes are its own): the question is asked as if no file
    # came with it, and the reader is sent to the new conversation.
    response = client.post("/chat/ask", {"question": "fine", "file": upload})
    conversation = Conversation.objects.get(user=user)
    assert (response.status_code, response["Location"]) == (302, conversation.get_absolute_url())
