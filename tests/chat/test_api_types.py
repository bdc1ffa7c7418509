"""The chat API takes what its schema says and nothing else: JSON strings for text, and the
rename's title required, as the schema states."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from chat.models import Conversation


@pytest.fixture
def signed_in(db):
    user = get_user_model().objects.create_user("typed", "typed@example.org", "pw-typed-1234")
    client = Client()
    client.force_login(user)
    return user, client


def _send(client, method, path, body):
    return getattr(client, method)(path, json.dumps(body), content_type="application/json")


@pytest.mark.parametrize("question", [0, 1.5, True, ["a question"], {"q": "a question"}, None])
def test_a_question_that_is_not_a_string_is_refused(signed_in, question):
    _, client = signed_in
    response = _send(client, "post", "/api/v1/me/conversations/", {"question": question})
    assert response.status_code == 400
    assert "question" in response.json()["error"]["fields"]
    assert not Conversation.objects.exists()


def test_a_title_that_is_not_a_string_or_is_missing_is_refused(signed_in):
    user, client = signed_in
    conversation = Conversation.objects.create(user=user, title="Kept")
    path = f"/api/v1/me/conversations/{conversation.pk}/"
    for body in ({"title": 0}, {}):
        response = _send(client, "patch", path, body)
        assert response.status_code == 400 and "title" in response.json()["error"]["fields"]
    conversation.refresh_from_db()
    assert conversation.title == "Kept"
    assert _send(client, "patch", path, {"title": "Renamed"}).status_code == 200


def test_the_schema_says_the_rename_needs_its_title(client):
    schema = client.get("/openapi.json").json()
    body = schema["paths"]["/api/v1/me/conversations/{conversation_id}/"]["patch"]["requestBody"]
    assert body["required"] is True
    name = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert schema["components"]["schemas"][name]["required"] == ["title"]
