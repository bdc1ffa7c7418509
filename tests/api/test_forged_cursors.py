"""Forged cursors on every list that pages with one: a 400 with the error body, never a 500.

The lists are read from the OpenAPI schema (every operation with a `cursor` parameter), so a new
list is swept without touching this file.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import override_settings

# A hundred requests and more per test: the sweep is not about the rate limit.
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("_unthrottled"),
]


@pytest.fixture
def _unthrottled():
    with override_settings(API_THROTTLE_RATES={"anon": None, "user": None}):
        yield


def _b64(payload) -> str:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


FORGED = [
    _b64({"v": [-1, -1], "r": 0}),
    _b64({"v": ["x", 1], "r": 0}),
    _b64({"v": [1, "x"], "r": 1}),
    _b64({"v": [None, None], "r": 0}),
    _b64({"v": [[], {}], "r": 0}),
    _b64({"v": ["2024-01-01T00:00:00+00:00", 10**30], "r": 0}),
    _b64({"v": ["x\u0000", 1], "r": 0}),
    _b64({"v": "xy", "r": 0}),
    _b64({"r": 0}),
    _b64("[]"),
    _b64("null"),
    _b64("1e999"),
    "%%%",
    "not-a-cursor",
    "a" * 4000,
]


def cursor_lists(api, world) -> list[tuple[str, dict]]:
    schema = api.get("/openapi.json").json()
    keys = {
        "{arxiv_id}": world["papers"][0].arxiv_id,
        "{id}": str(world["ada"].pk),
        "{key}": str(world["cambridge"].pk),
    }
    urls = []
    for path, item in schema["paths"].items():
        parameters = item.get("get", {}).get("parameters", [])
        if "cursor" in {p["name"] for p in parameters}:
            for placeholder, value in keys.items():
                path = path.replace(placeholder, value)
            # Required query parameters (a search's `q`) are given, so the cursor is what fails.
            required = {
                p["name"]: "a" for p in parameters if p["in"] == "query" and p.get("required")
            }
            urls.append((path, required))
    return urls


def test_every_cursor_list_is_found(api, world):
    urls = [url for url, _ in cursor_lists(api, world)]
    assert "/api/v1/papers/" in urls and "/api/v1/institutions/" in urls
    assert f"/api/v1/researchers/{world['ada'].pk}/papers/" in urls
    assert len(urls) >= 6


def _is_invalid_cursor(response) -> bool:
    if response.status_code != 400:
        return False
    error = response.json()["error"]
    return error["status"] == 400 and error["code"] == "invalid" and "cursor" in error["fields"]


def test_forged_cursors_are_400_with_the_error_body(api, world):
    api.raise_request_exception = False
    wrong = []
    for url, required in cursor_lists(api, world):
        for cursor in FORGED:
            response = api.get(url, {**required, "cursor": cursor})
            if not _is_invalid_cursor(response):
                wrong.append((url, cursor[:40], response.status_code))
    assert wrong == []


def test_a_cursor_is_refused_by_another_list_and_when_altered(api, world, paper_factory):
    for _ in range(3):
        paper_factory()
    next_url = api.get("/api/v1/papers/", {"page_size": 2}).json()["next"]
    cursor = parse_qs(urlsplit(next_url).query)["cursor"][0]
    assert api.get("/api/v1/papers/", {"cursor": cursor, "page_size": 2}).status_code == 200
    # The researchers' list orders by other fields: the papers' cursor means nothing there.
    assert _is_invalid_cursor(api.get("/api/v1/researchers/", {"cursor": cursor}))
    # Any changed character breaks the signature.
    altered = cursor[:-1] + ("A" if cursor[-1] != "A" else "B")
    assert _is_invalid_cursor(api.get("/api/v1/papers/", {"cursor": altered}))
