from __future__ import annotations

import html
import re

import pytest
from django.test import override_settings
from django.urls import resolve

pytestmark = pytest.mark.django_db


@override_settings(SITE_URL="https://wovepaper.example")
def test_llms_txt_describes_the_site_from_site_url(client):
    response = client.get("/llms.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    text = response.content.decode()
    assert text.startswith("# wovepaper\n\n> ")
    for needle in (
        "https://wovepaper.example/papers/",
        "https://wovepaper.example/researchers/",
        "https://wovepaper.example/institutions/",
        "https://wovepaper.example/api/v1/",
        "https://wovepaper.example/openapi.json",
        "Accept: text/markdown",
        "https://wovepaper.example/feeds/latest.rss",
        "https://wovepaper.example/feeds/category/",
        "/feed.rss",
        "https://wovepaper.example/developers",
    ):
        assert needle in text, needle
    assert "127.0.0.1" not in text
    # llmstxt.org: markdown links in the sections.
    assert re.search(r"^## API$", text, re.M) and re.search(r"^- \[.+\]\(https://", text, re.M)


@override_settings(SITE_URL="https://wovepaper.example")
def test_llms_txt_is_read_by_the_reference_parser_and_every_item_is_a_link(client):
    from llms_txt import parse_llms_file

    text = client.get("/llms.txt").content.decode()
    parsed = parse_llms_file(text)
    assert parsed.title == "wovepaper" and parsed.summary.startswith("wovepaper indexes")
    assert set(parsed.sections) == {"Pages", "API", "Feeds", "Data", "Optional"}
    items = [item for links in parsed.sections.values() for item in links]
    # Every list item of a section, as llmstxt.org asks: "[name](url)", then ": notes".
    listed = re.findall(r"^- ", text.split("\n## ", 1)[1], re.M)
    assert len(items) == len(listed) > 15
    for item in items:
        assert item["url"].startswith("https://wovepaper.example/"), item
        # A route of the site (the bulk data file exists once the daily export has run).
        resolve(item["url"].removeprefix("https://wovepaper.example").split("?")[0])


def test_developers_page_html_and_markdown(client):
    html = client.get("/developers")
    assert html.status_code == 200
    body = html.content.decode()
    assert "<h1>Developers</h1>" in body
    assert 'href="/developers/reference"' in body and 'href="/openapi.json"' in body
    assert "60 requests a minute" in body  # the default anonymous rate, from the settings
    assert "Retry-After" in body
    markdown = client.get("/developers", HTTP_ACCEPT="text/markdown")
    assert markdown["Content-Type"] == "text/markdown; charset=utf-8"
    text = markdown.content.decode()
    assert text.startswith("# Developers")
    assert "curl 'http://127.0.0.1:8000/api/v1/papers/0704.0001/'" in text
    # The chat API is documented on both (signed-in only, same quotas as the page).
    assert "POST /api/v1/me/conversations/" in text and "/api/v1/me/conversations/" in body
    assert "<" not in text.replace("<arxiv-id>", "").replace("<id>", "").replace(
        "<slug>", ""
    ).replace("<code>", "").replace("<id or ROR id>", "")


@pytest.mark.parametrize("url", ["/developers/reference", "/developers/redoc"])
def test_interactive_reference_loads_nothing_from_other_hosts(client, url):
    response = client.get(url, follow=True)
    assert response.status_code == 200
    body = response.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', body)
    # Swagger UI's start-up script is a file of its own (the CSP allows no inline script).
    for script in [a for a in assets if "script=" in a]:
        body += client.get(html.unescape(script)).content.decode()
    assert "/openapi.json" in body
    assert assets and all(a.startswith("/static/") or a.startswith("/") for a in assets), assets
    assert not re.search(r"https?://(?!127\.0\.0\.1)", body), "a third-party URL in the page"


def test_reference_assets_are_served_from_our_static_files(client):
    from django.contrib.staticfiles import finders

    for asset in ("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js",):
        assert finders.find(asset), asset
