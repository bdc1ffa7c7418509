"""A search for an arXiv id alone (pasted, typed or as an address) leads to that paper: a form's
search goes to its page, as-you-type results name it, and an id not here says so and where to
look instead (wovepaper.views.search, wovepaper.lib.identifiers.arxiv_id_named)."""

from __future__ import annotations

import pytest


@pytest.fixture
def held(paper_factory):
    return paper_factory(
        arxiv_id="1706.03762",
        title="Attention is All you Need",
        slug="attention-is-all-you-need",
        abstract="The dominant sequence transduction models are based on recurrent networks.",
    )


@pytest.mark.parametrize(
    "query", ["1706.03762", "arXiv:1706.03762v5", "https://arxiv.org/abs/1706.03762v2"]
)
def test_an_id_here_goes_to_its_paper(client, held, query):
    response = client.get("/search", {"q": query})
    assert response.status_code == 302
    assert response["Location"] == held.get_absolute_url()
    # The markdown reader follows it to the paper's own markdown page.
    markdown = client.get("/search", {"q": query}, HTTP_ACCEPT="text/markdown", follow=True)
    assert markdown.content.decode().startswith("# Attention is All you Need")


def test_as_you_type_results_name_the_paper_and_stay(client, held):
    response = client.get("/search", {"q": "1706.03762"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'is <a href="{held.get_absolute_url()}">Attention is All you Need</a>' in html


def test_an_id_not_here_says_so_and_where_to_look(client, held):
    html = client.get("/search", {"q": "arXiv:2501.00001"}).content.decode()
    assert "arXiv:2501.00001 is not here" in html
    assert 'href="https://arxiv.org/abs/2501.00001"' in html
    assert "use fewer words" not in html  # "arXiv" alone is no search for the paper
    markdown = client.get(
        "/search", {"q": "2501.00001"}, HTTP_ACCEPT="text/markdown"
    ).content.decode()
    assert (
        "arXiv:2501.00001 is not here" in markdown
        and "https://arxiv.org/abs/2501.00001" in markdown
    )
    # A deleted paper is not here either.
    held.is_deleted = True
    held.save()
    assert client.get("/search", {"q": "1706.03762"}).status_code == 200


def test_a_number_that_names_no_month_is_searched_as_words(client, held):
    response = client.get("/search", {"q": "1234.5678"})
    assert response.status_code == 200 and "is not here" not in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_an_id_in_a_browser_goes_to_its_paper_or_is_named_as_you_type(
    live_server, browser, paper_factory
):
    from tests.test_pages_browser import WIDTHS

    held = paper_factory(
        arxiv_id="1706.03762", title="Attention is All you Need", slug="attention-is-all-you-need"
    )
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.set_default_timeout(20_000)
        # From the home page's form: straight to the paper's page.
        page.goto(f"{live_server.url}/")
        page.fill("#home-q", "arXiv:1706.03762v5")
        with page.expect_navigation():
            page.press("#home-q", "Enter")
        assert page.url == f"{live_server.url}{held.get_absolute_url()}"
        assert page.locator("h1").inner_text() == "Attention is All you Need"
        # Typed on the search page: the results name it, and the reader stays.
        page.goto(f"{live_server.url}/search")
        page.fill("#q", "1706.03762")
        named = page.locator(".named-paper")
        named.wait_for()
        assert named.locator("a").get_attribute("href") == held.get_absolute_url()
        assert page.url.startswith(f"{live_server.url}/search")
        # An id not here says so, with the way to arXiv.
        page.goto(f"{live_server.url}/search?q=2501.00001")
        assert "is not here" in page.locator(".named-paper").inner_text()
        assert (
            page.locator(".named-paper a").get_attribute("href")
            == "https://arxiv.org/abs/2501.00001"
        )
        page.close()


def test_the_api_finds_the_paper_an_id_names_alone(client, held, paper_factory):
    """As the page goes to it: the one paper, `match: id`, whatever the filters; its citation
    file holds it too. An id not here finds nothing."""
    paper_factory(title="Attention to 1706.03762", abstract="Cites 1706.03762 by its id.")
    for query in ("1706.03762", "https://arxiv.org/abs/1706.03762v2"):
        answer = client.get(
            "/api/v1/search/papers/", {"q": query, "category": "hep-th", "mode": "semantic"}
        ).json()
        assert answer["count"] == 1
        assert [(r["arxiv_id"], r["match"]) for r in answer["results"]] == [("1706.03762", "id")]
    page_two = client.get("/api/v1/search/papers/", {"q": "1706.03762", "page": 2}).json()
    assert page_two["count"] == 1 and page_two["results"] == []
    bib = client.get("/api/v1/search/papers/cite.bib", {"q": "arXiv:1706.03762"}).content
    assert b"Attention is All you Need" in bib
    missing = client.get("/api/v1/search/papers/", {"q": "2501.00001"}).json()
    assert missing["count"] == 0 and missing["results"] == []
