"""Did you mean on the bundled sample of real arXiv metadata (#43): misspelt searches written
for its papers (benchmarks/data/typo-queries.tsv, the set the rule was tuned on) get the query
meant, and queries that mean nothing here get no suggestion. In Chromium, a reader follows the
suggestion to the papers."""

from __future__ import annotations

import re

import pytest

from papers.ingest.importing import snapshot_import
from papers.spelling import count_written_words, spelling_suggestion


@pytest.fixture
def sample(db, sample_path):
    snapshot_import(sample_path)
    assert count_written_words() > 20_000


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("neyman-pearson erasure list decodng", "neyman-pearson erasure list decoding"),
        ("fredholm determinants charge trasport", "fredholm determinants charge transport"),
        ("quantum shortest path netsukkuku", "quantum shortest path netsukuku"),
        (
            "impact dynamics oxidised liquid metal drops",
            "impact dynamics oxidized liquid metal drops",
        ),
        (
            "scanning tunneling microscopy mesoscopic grapene sheets",
            "scanning tunneling microscopy mesoscopic graphene sheets",
        ),
    ],
)
def test_misspelt_searches_of_the_sample_get_the_query_meant(sample, client, typed, meant):
    suggestion = spelling_suggestion(typed)
    assert suggestion is not None and suggestion.text == meant
    assert client.get("/api/v1/search/papers/", {"q": typed}).json()["did_you_mean"] == meant


@pytest.mark.parametrize(
    "query",
    [
        "vintor quabe",  # one edit from "victor", but "quabe" is nowhere
        "lawn mower repair",
        "tea towels",  # English words no paper of the sample writes
        "sourdough starter",
        "quantum entanglement",  # written as typed
    ],
)
def test_queries_that_are_no_misspelling_here_get_none(sample, client, query):
    assert spelling_suggestion(query) is None
    assert "did-you-mean" not in client.get("/search", {"q": query}).content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_reader_follows_the_suggestion_to_the_papers(live_server, browser, paper_factory):
    from tests.test_pages_browser import WIDTHS

    paper_factory(title="Gravitational waves from binary mergers", abstract="Chirps.")
    paper_factory(title="Pulsar timing arrays", abstract="Gravitational waves at nanohertz.")
    count_written_words()
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.set_default_timeout(20_000)
        page.goto(f"{live_server.url}/search")
        page.fill("#q", "gravitatonal waves")  # as-you-type results
        suggestion = page.locator(".did-you-mean")
        suggestion.wait_for()
        assert suggestion.inner_text() == "Did you mean gravitational waves?"
        assert suggestion.locator("b").inner_text() == "gravitational"
        box = suggestion.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width
        # Leaving the box asks for nothing again: its "change" used to, and that answer's new
        # address cancelled the navigation of the click that had moved the focus (a reader's
        # first click after typing was lost).
        asked = []
        page.on("request", lambda request, asked=asked: asked.append(request.url))
        page.locator("h1").click()
        page.wait_for_timeout(600)
        assert [url for url in asked if "/search" in url] == []
        suggestion.locator("a").click()
        page.wait_for_url(re.compile(r"[?&]q=gravitational\+waves(&|$)"))
        listed = page.locator("#results .results-count").first.inner_text()
        assert listed.startswith("2 papers contain the words")
        assert page.locator(".did-you-mean").count() == 0
        # A filter's change still asks for the page anew.
        page.select_option("select[name=sort]", "newest")
        page.wait_for_url(re.compile(r"[?&]sort=newest(&|$)"))
        assert page.locator("#results .results-count").first.inner_text() == listed
        # The researchers' tab has no filters: its box still searches as the reader types.
        errors: list[str] = []
        page.on(
            "console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None
        )
        page.goto(f"{live_server.url}/search?tab=researchers")
        page.fill("#q", "gravitational")
        page.wait_for_url(re.compile(r"[?&]q=gravitational(&|$)"))
        page.locator("h1").click()
        assert errors == []
        page.close()
