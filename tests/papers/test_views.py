# ruff: noqa: F811  (factory fixtures imported from tests/researchers/conftest.py)
from __future__ import annotations

import json
import re
from datetime import date

import pytest

from tests.researchers.conftest import link_author, researcher_factory  # noqa: F401

# Two of them for similar papers: the vector index's version (none once its file exists) and
# this paper's vector; a paper with neighbours adds their rows and authors (two more). Four
# for citations: references by source, the sources' coverage, citing papers by source, its
# archive references for "related by citations" (a paper with citations adds its lists:
# tests/papers/test_citation_pages.py).
PAPER_PAGE_QUERIES = 10


def jsonld_blocks(html: str) -> list[dict]:
    return [
        json.loads(block)
        for block in re.findall(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)
    ]


def test_paper_page_shows_the_paper(client, paper_factory):
    paper = paper_factory(
        title="Spectral gaps of random graphs",
        abstract="First paragraph about gaps.\n\nSecond paragraph with $\\lambda_2$.",
        categories=["math.CO", "cs.DM"],
        doi="10.1000/xyz(1)",
        journal_ref="J. Graph Th. 12 (2024)",
        comments="12 pages, 3 figures",
        license="http://creativecommons.org/licenses/by/4.0/",
        version=3,
        updated=date(2024, 3, 2),
        cited_by_count=17,
    )
    response = client.get(paper.get_absolute_url())
    assert response.status_code == 200
    html = response.content.decode()
    assert "Spectral gaps of random graphs" in html
    assert "<p>First paragraph about gaps.</p>" in html
    # TeX is shown as MathML, with the source kept as its alternative text.
    assert '<p>Second paragraph with <math alttext="\\lambda_2" display="inline">' in html
    assert "<mi>λ</mi><mn>2</mn>" in html
    assert "Combinatorics" in html and "Discrete Mathematics" in html
    assert "Ada Lovelace" in html and "Alan Turing" in html
    assert f"https://arxiv.org/abs/{paper.arxiv_id}" in html
    assert f"https://arxiv.org/pdf/{paper.arxiv_id}" in html
    assert "https://doi.org/10.1000/xyz%281%29" in html
    assert "J. Graph Th. 12 (2024)" in html and "12 pages, 3 figures" in html
    assert "v3" in html and "2 March 2024" in html and ">17<" in html
    assert f'<link rel="canonical" href="http://127.0.0.1:8000{paper.get_absolute_url()}">' in html
    assert '<meta property="og:type" content="article">' in html
    assert '<meta property="og:title" content="Spectral gaps of random graphs · wovepaper">' in html
    url = f"http://127.0.0.1:8000{paper.get_absolute_url()}"
    assert f'<meta property="og:url" content="{url}">' in html
    graph = jsonld_blocks(html)[-1]["@graph"]
    article = next(item for item in graph if item["@type"] == "ScholarlyArticle")
    assert article["name"] == paper.title
    assert [a["name"] for a in article["author"]] == ["Ada Lovelace", "Alan Turing"]
    # schema.org has no citation count: the page shows it, the markup does not claim it.
    assert "citationCount" not in article
    assert article["datePublished"] == paper.published.date().isoformat()
    crumbs = next(item for item in graph if item["@type"] == "BreadcrumbList")
    assert [c["name"] for c in crumbs["itemListElement"]] == [
        "wovepaper",
        "Combinatorics",
        paper.title,
    ]


def test_paper_without_citations_says_not_known(client, paper_factory):
    paper = paper_factory()
    assert "not known yet" in client.get(paper.get_absolute_url()).content.decode()


@pytest.mark.parametrize("suffix", ["", "-wrong-slug", "v2", "v2-wrong-slug", "/"])
def test_id_alone_wrong_slug_and_version_redirect_to_canonical(client, paper_factory, suffix):
    paper = paper_factory(title="Canonical addresses")
    response = client.get(f"/papers/{paper.arxiv_id}{suffix}")
    assert response.status_code == 301
    assert response["Location"] == paper.get_absolute_url()


def test_redirect_keeps_the_query_string(client, paper_factory):
    paper = paper_factory()
    response = client.get(f"/papers/{paper.arxiv_id}?ref=feed")
    assert response.status_code == 301
    assert response["Location"] == paper.get_absolute_url() + "?ref=feed"


@pytest.mark.parametrize("arxiv_id", ["astro-ph/9901001", "math.GT/0309136"])
def test_old_style_ids_work(client, paper_factory, arxiv_id):
    paper = paper_factory(arxiv_id=arxiv_id, title="An old paper", slug="an-old-paper")
    response = client.get(f"/papers/{arxiv_id}")
    assert response.status_code == 301
    assert response["Location"] == f"/papers/{arxiv_id}-an-old-paper"
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert arxiv_id in page.content.decode()
    assert client.get(f"/papers/{arxiv_id}v2")["Location"] == paper.get_absolute_url()


def test_unknown_paper_is_a_helpful_404(client, db):
    response = client.get("/papers/2401.99999")
    assert response.status_code == 404
    assert "not harvested" in response.content.decode() or "arrive" in response.content.decode()
    assert client.get("/papers/not-an-id").status_code == 404


def test_title_with_markup_and_latex_is_escaped(client, paper_factory):
    paper = paper_factory(
        title="<script>alert(1)</script> Spin-orbit in $\\alpha$-RuCl$_3$ & <b>friends</b>",
        abstract="We use <i>tags</i> and $x<y$ [link](http://evil) # not a heading",
    )
    html = client.get(paper.get_absolute_url()).content.decode()
    assert "<script>alert(1)" not in html
    assert '<meta property="og:title" content="&lt;script&gt;alert(1)&lt;/script&gt; Spin' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; Spin-orbit in $\\alpha$-RuCl$_3$ &amp;" in html
    assert "<b>friends</b>" not in html and "<i>tags</i>" not in html
    assert "and x&lt;y [link](http://evil)" in html  # the meta description, as plain text
    # The JSON-LD keeps the text but can never close its script element.
    for block in re.findall(r'<script type="application/ld\+json">(.*?)</script>', html, re.S):
        assert "<" not in block
    assert jsonld_blocks(html)[-1]["@graph"][0]["name"] == paper.title

    md = client.get(paper.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert md.startswith("# \\<script\\>alert(1)\\</script\\> Spin-orbit in $\\\\alpha$-RuCl$\\_3$")
    assert "\\[link\\](http://evil) \\# not a heading" in md


def test_markdown_variant(client, paper_factory):
    paper = paper_factory(
        title="Markdown please", categories=["cs.LG", "stat.ML"], abstract="One.\n\nTwo."
    )
    response = client.get(paper.get_absolute_url(), HTTP_ACCEPT="text/markdown")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/markdown")
    assert "Accept" in response["Vary"]
    body = response.content.decode()
    assert body.startswith("# Markdown please\n")
    assert "cs.LG (Machine Learning), stat.ML (Machine Learning)" in body
    assert "\nOne.\n\nTwo.\n" in body
    assert f"[{paper.arxiv_id}](https://arxiv.org/abs/{paper.arxiv_id})" in body


def test_authors_link_to_their_researchers_and_merged_ones_to_the_survivor(
    client, paper_factory, researcher_factory, link_author
):
    paper = paper_factory(authors=["Ada Lovelace", "Alan Turing", "Grace Hopper"])
    ada = researcher_factory("Ada Lovelace")
    survivor = researcher_factory("Alan Turing")
    merged = researcher_factory("Alan Turing", merged_into=survivor)
    link_author(paper, 1, ada)
    link_author(paper, 2, merged)
    html = client.get(paper.get_absolute_url()).content.decode()
    assert f'<a href="{ada.get_absolute_url()}">Ada Lovelace</a>' in html
    assert f'<a href="{survivor.get_absolute_url()}">Alan Turing</a>' in html
    assert merged.get_absolute_url() not in html
    assert "Grace Hopper" in html


@pytest.mark.parametrize("authors", [2, 50])
def test_paper_page_query_bound_does_not_grow_with_the_byline(
    client, paper_factory, researcher_factory, link_author, django_assert_max_num_queries, authors
):
    paper = paper_factory(authors=[f"Author {i}" for i in range(authors)])
    for position in range(1, authors + 1):
        link_author(paper, position, researcher_factory(f"Author {position}"))
    # The first view makes the paper's computed analysis (tasks inline, no model): a fixed
    # handful of queries, once. The bound is for every view after it.
    client.get(paper.get_absolute_url())
    with django_assert_max_num_queries(PAPER_PAGE_QUERIES):
        response = client.get(paper.get_absolute_url())
    assert response.status_code == 200
    assert response.content.decode().count('href="/researchers/') - 1 == authors  # and "Report"


def test_jsonld_of_an_undated_paper_dates_it_by_its_identifier_and_lists_each_doi(
    client, paper_factory
):
    paper = paper_factory(
        arxiv_id="1301.3781",
        published=None,
        doi="10.1086/520497 10.1088/0004-637X/704/2/1743",
    )
    graph = jsonld_blocks(client.get(paper.get_absolute_url()).content.decode())[-1]["@graph"]
    article = next(item for item in graph if item["@type"] == "ScholarlyArticle")
    assert article["datePublished"] == "2013-01"
    assert article["sameAs"] == [
        "https://arxiv.org/abs/1301.3781",
        "https://doi.org/10.1086/520497",
        "https://doi.org/10.1088/0004-637X/704/2/1743",
    ]


def test_a_title_reads_as_text_in_the_tab_and_as_math_on_the_page(client, paper_factory):
    # 1302.1160's title and 1302.1639's abstract (the bundled sample): case-protecting braces
    # and an author's own macro (\D).
    paper = paper_factory(
        title=r"The near-infrared spectral energy distribution of {\beta} Pictoris b",
        abstract=r"We show the transfer for $(\GL_n(\D),\GL_n(E))$ pairs.",
    )
    html = client.get(paper.get_absolute_url()).content.decode()
    title = "The near-infrared spectral energy distribution of β Pictoris b"
    assert f"<title>{title} · wovepaper</title>" in html
    assert f'<meta property="og:title" content="{title} · wovepaper">' in html
    assert (
        "(GL_n(D),GL_n(E)) pairs."
        in re.search(r'<meta name="description" content="([^"]*)"', html)[1]
    )
    assert "{" not in html.split("<h1", 1)[1].split("</h1>")[0]
    for page in (html, client.get("/").content.decode()):
        assert "\\GL_n(\\D)" not in page.replace('alttext="(\\GL_n(\\D)', "")
