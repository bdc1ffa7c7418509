"""Hostile path segments on every route of the site: never a server error.

Each route's parameters are replaced by segments a fuzzer or an attacker sends (NUL and other
control characters, overlong numbers, traversal, markup, broken percent-encoding), anonymous
and as staff (who reach the admin's object pages). A missing or refused key is a 4xx (or a
redirect), never a 500.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import URLResolver, get_resolver

pytestmark = pytest.mark.django_db

HOSTILE_SEGMENTS = [
    "%00",
    "1%00",
    "ror%00x",
    "%0a%0d",
    "%7f",
    "99999999999999999999999",
    "-1",
    "..%2f..%2fetc%2fpasswd",
    "%3Cscript%3Ealert(1)%3C%2Fscript%3E",
    "%27%20OR%201=1--",
    "%ff%fe",
    "%E2%80%AE",
    "x" * 3000,
]

_CONVERTER = re.compile(r"<(?:[^>:]+:)?[^>]+>")


def _replace_named_groups(regex: str, segment: str) -> str:
    """`^a/(?P<x>[a-z](?:b)?)\\.rss$` -> `a/<segment>.rss`: each named group (nesting included)
    becomes the segment, anchors and escapes go."""
    out, i = [], 0
    while i < len(regex):
        if regex.startswith("(?P<", i):
            depth = 0
            while True:
                if regex[i] == "\\":
                    i += 2
                    continue
                depth += {"(": 1, ")": -1}.get(regex[i], 0)
                i += 1
                if depth == 0:
                    break
            out.append(segment)
        else:
            out.append(regex[i])
            i += 1
    text = "".join(out).replace("^", "").replace("$", "")
    return re.sub(r"\\(.)", r"\1", text)


def _routes(patterns=None, prefix: str = ""):
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        text = str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + text)
        else:
            yield prefix + text


def hostile_urls() -> list[str]:
    urls = set()
    for route in _routes():
        if "<" not in route:
            continue
        for segment in HOSTILE_SEGMENTS:
            if "(?P<" in route:
                urls.add("/" + _replace_named_groups(route, segment))
            else:
                urls.add("/" + _CONVERTER.sub(lambda _m, s=segment: s, route))
    return sorted(urls)


def _server_errors(client, urls: list[str]) -> list[tuple[str, int]]:
    client.raise_request_exception = False
    failures = []
    for url in urls:
        response = client.get(url)
        if response.status_code >= 500:
            failures.append((url[:120], response.status_code))
    return failures


def test_every_route_is_enumerated():
    urls = hostile_urls()
    # The routes that look a key up are all there (a regression in the walk would empty this).
    for expected in ("/institutions/%00", "/papers/1%00", "/researchers/ror%00x", "/admin/"):
        assert any(url.startswith(expected) for url in urls), expected
    assert len(urls) > 100 * len(HOSTILE_SEGMENTS) // 2


def test_hostile_path_segments_anonymous(client, paper_factory):
    paper_factory()
    assert _server_errors(client, hostile_urls()) == []


def test_hostile_path_segments_as_staff(client, paper_factory):
    paper_factory()
    staff = get_user_model().objects.create_superuser("curator", "c@example.org", "x-long-pass")
    client.force_login(staff)
    assert _server_errors(client, hostile_urls()) == []


@pytest.mark.parametrize("path", ["/institutions/%00", "/institutions/1%00", "/papers/ror%00x"])
def test_nul_in_a_key_is_the_not_found_page(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert b"<html" in response.content.lower()


def test_nul_in_an_api_path_is_the_json_not_found_body(client):
    response = client.get("/api/v1/institutions/1%00/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
