"""Every page template's HTML parses without a single error in html5lib (the WHATWG parsing
algorithm that browsers follow): a <ul> in a <p>, a tag cut in half by a truncation, a stray end
tag would each be one. Signed out and signed in, over pages that show math in titles, bylines
with researchers, tables, forms, lists and the reader's own pages."""

from __future__ import annotations

import html5lib
import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.library.lists import reading_list_default
from institutions.models import Institution
from tests.researchers.conftest import link_author, researcher_factory  # noqa: F401

pytestmark = pytest.mark.django_db

MATH_TITLE = r"The Cox Ring of $\bar{M}_{0,6}$ and $\chi_{c0,2}$ decays of {β} Pictoris b at z~0.45"


def parse_errors(html: bytes) -> list[str]:
    parser = html5lib.HTMLParser()
    parser.parse(html)
    text = html.decode()
    lines = text.splitlines()
    errors = []
    for (line, column), code, data in parser.errors:
        where = lines[line - 1][max(0, column - 60) : column + 20] if 0 < line <= len(lines) else ""
        errors.append(f"{code} {data} at {line}:{column}: {where}")
    return errors


@pytest.fixture
def site(paper_factory, researcher_factory, link_author):  # noqa: F811
    paper = paper_factory(title=MATH_TITLE, categories=["math.AG", "hep-ph"])
    researcher = researcher_factory("Ada Lovelace")
    link_author(paper, 1, researcher)
    Institution.objects.create(name="University of Example", ror_id="02bfwt286")
    user = get_user_model().objects.create_user("reader", "reader@example.org", "pw-reader-123")
    reading_list_default(user=user)
    return paper, researcher, user


def _pages(paper, researcher) -> list[str]:
    institution = Institution.objects.get()
    return [
        "/",
        "/papers",
        paper.get_absolute_url(),
        f"/papers/{paper.arxiv_id}/references",
        f"/papers/{paper.arxiv_id}/cited-by",
        "/search?q=cox+ring",
        "/search?q=lovelace&tab=researchers",
        "/researchers",
        researcher.get_absolute_url(),
        "/institutions",
        institution.get_absolute_url(),
        "/categories/math.AG",
        "/about",
        "/developers",
        "/conflicts",
        "/accounts/login/",
        "/accounts/signup/",
        "/accounts/password/reset/",
        "/no/such/page",
    ]


SIGNED_IN_PAGES = ["/following", "/me/library", "/me/searches", "/accounts/", "/chat"]


def test_public_pages_parse_without_an_error(client, site):
    paper, researcher, _ = site
    found = {}
    for path in _pages(paper, researcher):
        response = client.get(path, follow=True)
        assert response.status_code in (200, 404), path
        if errors := parse_errors(response.content):
            found[path] = errors
    assert found == {}


def test_signed_in_pages_parse_without_an_error(site):
    paper, researcher, user = site
    client = Client()
    client.force_login(user)
    found = {}
    for path in [*SIGNED_IN_PAGES, paper.get_absolute_url(), researcher.get_absolute_url()]:
        response = client.get(path, follow=True)
        assert response.status_code == 200, path
        if errors := parse_errors(response.content):
            found[path] = errors
    assert found == {}


def test_a_truncated_title_in_a_breadcrumb_keeps_its_formulas_whole(client, site):
    paper, _, _ = site
    html = client.get(f"/papers/{paper.arxiv_id}/references").content.decode()
    crumbs = html.split('<nav class="crumbs"', 1)[1].split("</nav>", 1)[0]
    assert crumbs.count("<math") == crumbs.count("</math>") >= 1
