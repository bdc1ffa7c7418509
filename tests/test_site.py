# ruff: noqa: F811  (factory fixtures imported from tests/researchers/conftest.py)
from __future__ import annotations

import gzip
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.cache import cache
from pyld import jsonld

from institutions.models import Institution
from researchers.models import Researcher
from tests.researchers.conftest import researcher_factory  # noqa: F401  (shared fixture)

# Hybrid ranking adds one to the keyword search's: the semantic side's (its nearest papers'
# documents, for the filters; before any vector index file, whether anything is embedded).
SEARCH_QUERIES = 9
HOME_QUERIES = 4


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


def paper_titles(html: str) -> list[str]:
    return re.findall(r'<h3><a href="/papers/[^"]+">([^<]+)</a></h3>', html)


def assert_head(html: str, path: str) -> None:
    assert f'<link rel="canonical" href="http://127.0.0.1:8000{path}">' in html
    assert f'<meta property="og:url" content="http://127.0.0.1:8000{path}">' in html
    title = re.search(r"<title>([^<]+)</title>", html)[1]
    assert f'<meta property="og:title" content="{title}">' in html
    assert f'<meta name="twitter:title" content="{title}">' in html
    description = re.search(r'<meta name="description" content="([^"]{20,})">', html)[1]
    assert f'<meta property="og:description" content="{description}">' in html
    assert f'<meta name="twitter:description" content="{description}">' in html
    for block in re.findall(r'<script type="application/ld\+json">(.*?)</script>', html, re.S):
        json.loads(block)
    assert '"SearchAction"' in html


def test_home_shows_figures_search_and_newest_papers(client, paper_factory):
    old = paper_factory(title="Old news", published=datetime(2001, 1, 1, tzinfo=UTC))
    new = paper_factory(title="Fresh result", published=datetime(2025, 6, 1, tzinfo=UTC))
    Researcher.objects.create(display_name="Ada Lovelace")
    Institution.objects.create(name="Somewhere")
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert_head(html, "/")
    assert paper_titles(html)[:2] == [new.title, old.title]
    assert "<strong>2</strong> papers" in html
    assert "<strong>1</strong> researcher record<" in html
    assert "<strong>1</strong> institution<" in html
    assert 'action="/search"' in html
    md = client.get("/", HTTP_ACCEPT="text/markdown").content.decode()
    assert md.startswith("# wovepaper") and "[Fresh result]" in md and "Papers: about 2" in md


@pytest.mark.parametrize("n", [2, 50])
def test_home_query_bound(client, paper_factory, django_assert_max_num_queries, n):
    for _ in range(n):
        paper_factory()
    with django_assert_max_num_queries(HOME_QUERIES):
        assert client.get("/").status_code == 200
    # Figures are cached: a second view only reads the newest papers.
    with django_assert_max_num_queries(2):
        client.get("/")


@pytest.mark.postgres
def test_home_figures_use_planner_estimates_for_big_tables(client, paper_factory, monkeypatch):
    from wovepaper import selectors

    paper_factory()
    monkeypatch.setattr(selectors, "EXACT_UP_TO", -1)  # treat every table as big
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE papers_paper")
    figures = selectors.site_figures()
    assert figures["papers"] == 1


def test_search_finds_papers_researchers_and_institutions(
    client, paper_factory, researcher_factory
):
    paper_factory(title="Elastic training for deep learning", categories=["cs.DC"])
    paper_factory(title="Unrelated topology")
    researcher_factory("Elastic Sun", name_key="elastic sun", paper_count=2)
    researcher_factory(
        "Elastic Merged", name_key="elastic merged", merged_into=Researcher.objects.first()
    )
    Institution.objects.create(name="Institute for Elastic Things", country_code="DE")
    response = client.get("/search", {"q": "elastic"})
    assert response.status_code == 200
    html = response.content.decode()
    assert paper_titles(html) == ["Elastic training for deep learning"]
    assert "1 paper contains the word “elastic”" in html
    assert "Elastic Sun" in html and "Elastic Merged" not in html
    assert "Institute for Elastic Things" in html
    assert_head(html, "/search?q=elastic")

    people = client.get("/search", {"q": "ÉLASTIC", "tab": "researchers"}).content.decode()
    assert "Elastic Sun" in people and "Elastic Merged" not in people
    places = client.get("/search", {"q": "elastic", "tab": "institutions"}).content.decode()
    assert "Institute for Elastic Things" in places


def test_search_filters_by_category_dates_and_sorts(client, paper_factory):
    a = paper_factory(
        title="Quantum walks one",
        categories=["quant-ph"],
        published=datetime(2010, 5, 1, tzinfo=UTC),
        cited_by_count=1,
    )
    b = paper_factory(
        title="Quantum walks two",
        categories=["cs.LG"],
        published=datetime(2020, 5, 1, tzinfo=UTC),
        cited_by_count=50,
    )
    c = paper_factory(
        title="Quantum walks three",
        categories=["cs.LG", "quant-ph"],
        published=datetime(2024, 5, 1, tzinfo=UTC),
    )

    def titles(**params):
        return paper_titles(
            client.get("/search", {"q": "quantum walks", **params}).content.decode()
        )

    assert sorted(titles(category="quant-ph")) == sorted([a.title, c.title])
    assert titles(sort="newest") == [c.title, b.title, a.title]
    assert titles(sort="oldest") == [a.title, b.title, c.title]
    assert titles(sort="cited")[:2] == [b.title, a.title]
    assert sorted(titles(date_from="2015-01-01", date_to="2020-05-01")) == [b.title]
    assert titles(date_to="2010-05-01") == [a.title]


def test_search_pages_ten_at_a_time(client, paper_factory):
    for i in range(15):
        paper_factory(title=f"Lattice model {i}", published=datetime(2020, 1, 1 + i, tzinfo=UTC))
    first = client.get("/search", {"q": "lattice", "sort": "newest"}).content.decode()
    assert len(paper_titles(first)) == 10 and "Page 1 of 2" in first
    second = client.get("/search", {"q": "lattice", "sort": "newest", "page": 2}).content.decode()
    assert len(paper_titles(second)) == 5 and 'rel="prev"' in second


def test_search_bad_filters_get_a_message_not_an_error(client, paper_factory):
    response = client.get("/search", {"q": "x", "date_from": "yesterday", "category": "<b>"})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'role="alert"' in html and "Enter a valid date." in html
    assert "<b>" not in html


def test_search_by_category_alone_lists_its_newest_papers(client, paper_factory):
    paper_factory(
        title="Old in field", categories=["hep-th"], published=datetime(2000, 1, 1, tzinfo=UTC)
    )
    paper_factory(
        title="New in field", categories=["hep-th"], published=datetime(2024, 1, 1, tzinfo=UTC)
    )
    paper_factory(title="Elsewhere", categories=["cs.LG"])
    html = client.get("/search", {"category": "hep-th"}).content.decode()
    assert paper_titles(html) == ["New in field", "Old in field"]
    assert "Newest in High Energy Physics - Theory" in html


def test_search_htmx_request_gets_only_the_results_fragment(client, paper_factory):
    paper_factory(title="Fragment friendly")
    response = client.get("/search", {"q": "fragment"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "<html" not in html and "Fragment friendly" in html
    assert 'class="tabs"' in html
    assert "HX-Request" in response["Vary"]
    restore = client.get(
        "/search", {"q": "fragment"}, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert "<html" in restore.content.decode()


def test_search_markdown_variant(client, paper_factory):
    paper_factory(title="Markdown *search* result")
    body = client.get("/search", {"q": "markdown"}, HTTP_ACCEPT="text/markdown").content.decode()
    assert body.startswith("# Search: markdown")
    assert "[Markdown \\*search\\* result]" in body
    empty = client.get("/search", HTTP_ACCEPT="text/markdown").content.decode()
    assert "Parameters:" in empty


@pytest.mark.parametrize("n", [2, 50])
def test_search_query_bound(
    client, paper_factory, researcher_factory, django_assert_max_num_queries, n
):
    for i in range(n):
        paper_factory(title=f"Bounded search {i}", authors=["A One", "B Two", "C Three"])
        researcher_factory(f"Bounded Person {i}", name_key=f"bounded person {i}")
        Institution.objects.create(name=f"Bounded Institute {i}")
    with django_assert_max_num_queries(SEARCH_QUERIES):
        html = client.get("/search", {"q": "bounded", "category": "cs.LG"}).content.decode()
    assert len(paper_titles(html)) == min(n, 10)
    for tab in ("researchers", "institutions"):
        # The engine's ids, then their rows: two queries with the database engine too.
        with django_assert_max_num_queries(2):
            client.get("/search", {"q": "bounded", "tab": tab})


@pytest.mark.parametrize(
    "path,text",
    [
        ("/about", "Where the data comes from"),
        ("/contact", "team@example.org"),
        ("/privacy", "third-party tracker"),
    ],
)
def test_about_contact_privacy(client, db, settings, path, text):
    settings.CONTACT_EMAIL = "team@example.org"
    response = client.get(path)
    assert response.status_code == 200
    html = response.content.decode()
    assert text in html
    assert_head(html, path)
    md = client.get(path, HTTP_ACCEPT="text/markdown")
    assert md["Content-Type"].startswith("text/markdown") and md.content.decode().startswith("# ")


def test_privacy_covers_accounts_cookies_logs_and_sources(client, db):
    html = client.get("/privacy").content.decode()
    for needle in ("email address", "csrftoken", "sessionid", "Server logs", "CC0", "ODC-BY"):
        assert needle in html


def test_404_is_helpful_in_html_and_markdown(client, db):
    response = client.get("/no/such/page")
    assert response.status_code == 404
    html = response.content.decode()
    assert "mistyped" in html and "arrive from arXiv" in html
    assert 'action="/search"' in html and 'href="/"' in html
    assert "/papers/&lt;arXiv id&gt;" in html and "/institutions/&lt;id, ROR id or name&gt;" in html
    md = client.get("/no/such/page", HTTP_ACCEPT="text/markdown")
    assert md.status_code == 404 and md["Content-Type"].startswith("text/markdown")
    assert "`/researchers/<id>`" in md.content.decode()


def test_404_for_an_unknown_paper_points_to_arxiv(client, db):
    html = client.get("/papers/2612.99999").content.decode()
    assert '<a href="https://arxiv.org/abs/2612.99999" rel="noopener">open it on arXiv</a>' in html
    assert "arxiv.org" not in client.get("/no/such/page").content.decode().split("</main>")[0]


def test_404_escapes_the_requested_path(client, db):
    html = client.get("/%3Cscript%3Ealert(1)%3C/script%3E").content.decode()
    assert "We have no page at <code>/&lt;script&gt;alert(1)&lt;/script&gt;</code>." in html
    assert "<script>alert(1)" not in html


# The schema.org vocabulary and its JSON-LD context, release 30.0
# (tests/fixtures/standards/PROVENANCE.md), read offline.
STANDARDS = Path(__file__).parent / "fixtures" / "standards"
SCHEMA = "http://schema.org/"  # the context's @vocab: every term expands under it


def _schemaorg_terms() -> tuple[frozenset[str], frozenset[str]]:
    path = STANDARDS / "schemaorg-current-https.jsonld.gz"
    graph = json.load(gzip.open(path, "rt", encoding="utf-8"))["@graph"]
    kinds = {
        node["@id"].removeprefix("schema:"): node["@type"]
        for node in graph
        if node["@id"].startswith("schema:")
    }
    properties = {term for term, kind in kinds.items() if kind == "rdf:Property"}
    return frozenset(properties), frozenset(kinds.keys() - properties)


SCHEMA_PROPERTIES, SCHEMA_TYPES = _schemaorg_terms()
SCHEMA_CONTEXT = json.load(gzip.open(STANDARDS / "schemaorgcontext.jsonld.gz", "rt"))


def _offline_loader(url: str, options: dict) -> dict:
    # The pages name schema.org's context by URL; pyld gets the committed copy, and any
    # other document is an error rather than a download.
    if url.rstrip("/") not in {"https://schema.org", "http://schema.org"}:
        raise ValueError(f"not offline: {url}")
    return {"contextUrl": None, "documentUrl": url, "document": SCHEMA_CONTEXT}


def outside_schemaorg(document: dict) -> list[str]:
    """Every property and @type of a JSON-LD document, expanded by pyld with schema.org's
    context, that the schema.org vocabulary does not define. The context's @vocab expands
    any name at all under schema.org, so each expanded term is looked up in the vocabulary."""
    expanded = jsonld.expand(document, {"documentLoader": _offline_loader})
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
            return
        if not isinstance(node, dict) or "@value" in node:
            return  # a literal: its @type is a datatype (xsd:date), not a class
        for key, value in node.items():
            if key == "@type":
                found.extend(
                    f"@type {t}" for t in value if t.removeprefix(SCHEMA) not in SCHEMA_TYPES
                )
                continue
            if key.startswith("@"):
                walk(value)
                continue
            # schema.org's "-input"/"-output" annotations name a property (SearchAction's
            # query-input).
            term = re.sub(r"-(input|output)$", "", key.removeprefix(SCHEMA))
            if not key.startswith(SCHEMA) or term not in SCHEMA_PROPERTIES:
                found.append(key)
            walk(value)

    walk(expanded)
    return found


def jsonld_of(html: str) -> list[dict]:
    return [
        json.loads(block)
        for block in re.findall(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)
    ]


def test_the_vocabulary_check_can_fail():
    context = "https://schema.org"
    article = {"@context": context, "@type": "ScholarlyArticle", "citationCount": 3}
    assert outside_schemaorg(article) == [f"{SCHEMA}citationCount"]
    assert outside_schemaorg({"@context": context, "@type": "Paperish", "name": "x"}) == [
        f"@type {SCHEMA}Paperish"
    ]
    nested = {"@context": context, "@graph": [{"@type": "Person", "knows": {"colour": "red"}}]}
    assert outside_schemaorg(nested) == [f"{SCHEMA}colour"]


def test_every_jsonld_property_and_type_is_schemaorgs(client, paper_factory, researcher_factory):
    # Math, accents and special characters, several DOIs, an undated paper with a count.
    paper = paper_factory(
        title=r"50% of {\beta} Pictoris b & $(\GL_n(\D),\GL_n(E))$ <b>x</b>",
        abstract=r"Erdős's $\alpha$ & z~0.45 #1.",
        authors=["Paul Erdős", "ATLAS Collaboration"],
        doi="10.1086/520497 10.1088/0004-637X/704/2/1743",
        journal_ref="Astrophys. J. 704 (2009) 1743",
        cited_by_count=7,
    )
    undated = paper_factory(title="Undated", published=None)
    researcher = Researcher.objects.create(display_name="Paul Erdős", name_key="paul erdos")
    paper.authorships.filter(position=1).update(researcher=researcher)
    institution = Institution.objects.create(name="Université Paris-Saclay", ror_id="03xjwb503")
    pages = [
        "/",
        paper.get_absolute_url(),
        researcher.get_absolute_url(),
        f"/institutions/{institution.pk}",
        undated.get_absolute_url(),
    ]
    checked = 0
    for url in pages:
        response = client.get(url, follow=True)
        assert response.status_code == 200, url
        for document in jsonld_of(response.content.decode()):
            assert outside_schemaorg(document) == [], url
            checked += 1
    assert checked >= len(pages) + 3  # each page's own document besides the site's
