"""wovepaper.features is the list of what a reader has: every route of the site belongs to one
feature (or is said to be none, with why), every path of /openapi.json to one feature's API, and
/developers, the README's first paragraph and the demo's closing list name every feature. A new
route or API path fails here until it is placed, so those lists cannot fall behind the code."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from wovepaper.demo.identities import demo_tour
from wovepaper.features import FEATURES, NOT_A_FEATURE, feature_routes

README = Path(__file__).resolve().parents[1] / "README.md"
# The admin's, the API's (its paths are checked through /openapi.json) and allauth's own pages
# (sign-in, e-mail, password: the Account feature's, reached from /accounts/).
NOT_THE_SITES = ("admin/", "api/v1/", "accounts/")


def _routes(patterns, prefix: str = "", namespace: str | None = None):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = pattern.namespace
            ns = f"{namespace}:{inner}" if namespace and inner else inner or namespace
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern), ns)
        elif isinstance(pattern, URLPattern):
            route = prefix + str(pattern.pattern)
            name = f"{namespace}:{pattern.name}" if namespace and pattern.name else pattern.name
            yield route, name or route


def site_routes() -> dict[str, str]:
    """Each route name of the site (a pattern without a name by its pattern) and its path."""
    return {
        name: route
        for route, name in _routes(get_resolver().url_patterns)
        if not route.startswith(NOT_THE_SITES) or name in feature_routes()
    }


def test_every_route_of_the_site_belongs_to_one_feature_or_says_why_not():
    owned = [route for f in FEATURES for route in f.routes]
    assert len(owned) == len(set(owned)), "a route is in two features"
    routes = site_routes()
    placed = set(owned) | set(NOT_A_FEATURE)
    unplaced = {name: path for name, path in routes.items() if name not in placed}
    assert unplaced == {}, "place each new route in wovepaper.features"
    # Nor does the list name a route that is gone.
    every = {name for _, name in _routes(get_resolver().url_patterns)}
    assert placed - every == set()


def test_every_api_path_belongs_to_one_feature(client):
    paths = set(client.get("/openapi.json").json()["paths"])
    listed = [path for f in FEATURES for path in f.api]
    assert len(listed) == len(set(listed))
    assert paths - set(listed) == set(), "name each new API path in a feature's api"
    assert set(listed) - paths == set()


def test_developers_names_every_feature_with_its_page_and_api(client):
    for accept in ("text/html", "text/markdown"):
        page = html.unescape(client.get("/developers", HTTP_ACCEPT=accept).content.decode())
        for feature in FEATURES:
            assert feature.title in page, (accept, feature.title)
            assert feature.page in page, (accept, feature.page)
            for path in feature.api:
                assert path.removeprefix("/api/v1") in page, (accept, path)


def test_the_readmes_first_paragraph_names_every_feature():
    text = README.read_text()
    first = " ".join(text.split("\n\n")[1].split())  # after the title
    missing = [f.title for f in FEATURES if f.readme not in first]
    assert missing == [], f"the README's first paragraph does not name {missing}"


@pytest.mark.django_db
def test_the_demos_closing_list_names_every_feature(paper_factory):
    from researchers.models import Researcher

    paper_factory(arxiv_id="2401.00001")
    Researcher.objects.create(display_name="Ada Lovelace", name_key="ada lovelace")
    said = "\n".join(demo_tour("http://127.0.0.1:8000"))
    for feature in FEATURES:
        line = rf"^\s+{re.escape(feature.title)}( \*)?\s+http://127\.0\.0\.1:8000/"
        assert re.search(line, said, re.M), feature.title
    # Each address is one to open: a paper and a researcher of the demo stand in for "<…>".
    assert "<" not in said
