"""The Content-Security-Policy (#12, item 7): strict on every page, and the pages still work
under it in Chromium (no violation reported), the API reference included."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tests.conftest import RECORD_VIOLATIONS, csp_violations, session_cookie

pytestmark = pytest.mark.django_db


def directives(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    out = {}
    for part in header.split(";"):
        name, *values = part.split()
        out[name] = values
    return out


@pytest.mark.parametrize("path", ["/", "/papers", "/search?q=x", "/accounts/login/", "/developers"])
def test_pages_carry_a_strict_policy(client, path):
    policy = directives(client.get(path))
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["default-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]


def test_api_reference_pages_allow_inline_styles_but_never_inline_scripts(client):
    assert client.get("/developers/redoc")["Location"] == "/developers/reference"
    for path in ("/developers/reference",):
        response = client.get(path)
        policy = directives(response)
        assert policy["script-src"] == ["'self'"], path
        assert "'unsafe-inline'" in policy["style-src"], path
        # Nothing on the page needs an inline script: every <script> has a src.
        html = response.content.decode()
        assert html.count("<script") == html.count("<script src="), path


def test_pages_work_under_the_policy_in_chromium(live_server, browser, paper_factory):
    paper = paper_factory(title="Content security for example papers")
    staff = get_user_model().objects.create_superuser("csp", "csp@example.org", "a-long-pass-9")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    page.set_default_timeout(20_000)
    url = live_server.url
    seen = {}
    for path in ("/", "/papers", paper.get_absolute_url(), "/accounts/login/", "/developers"):
        page.goto(url + path)
        page.wait_for_load_state("load")
        seen[path] = csp_violations(page)

    page.goto(url + "/developers/reference")
    page.wait_for_selector(".swagger-ui .opblock")
    seen["/developers/reference"] = csp_violations(page)

    # The admin, signed in (its own scripts and styles, and the curators' screens).
    context.add_cookies(session_cookie(live_server, staff))
    for path in ("/admin/", "/admin/researchers/researcher/curation/"):
        page.goto(url + path)
        page.wait_for_load_state("load")
        seen[path] = csp_violations(page)
    context.close()
    # No refusal anywhere: the site loads nothing from another host (docs/operations.md,
    # "Security"), and Redoc, whose bundle showed an image from its makers' CDN, is not served.
    assert {path: v for path, v in seen.items() if v} == {}


def test_the_bad_host_page_carries_the_policy_too(client):
    response = client.get("/", HTTP_HOST="not-ours.example")
    assert response.status_code == 400
    assert "default-src" in response["Content-Security-Policy"]
