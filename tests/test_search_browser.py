"""The search page's two parts in Debian's Chromium at desktop and phone widths, over the
bundled sample of real arXiv metadata with the demo's vectors (the default encoder's): the
papers that contain the words, counted, with the words marked in their passages; those related
by meaning under their own heading; and an empty state for words that match nothing and mean
nothing. Screenshots are kept in test-artifacts/."""

from __future__ import annotations

import re

import pytest

from papers.ingest.importing import snapshot_import
from papers.models import Authorship, Paper
from papers.search import PAPERS, paper_search
from papers.search.embedding_stage import embeddings_load
from researchers.models import Researcher
from tests.test_pages_browser import ARTIFACTS, WIDTHS
from wovepaper.lib.search import backend_for
from wovepaper.lib.search.highlight import QueryWords


@pytest.fixture
def embedded_sample(transactional_db, sample_path, settings):
    snapshot_import(sample_path)
    assert embeddings_load(settings.DEMO_EMBEDDINGS) > 3000
    backend_for(PAPERS, "semantic").rebuild()


def _no_overflow(page) -> None:
    metrics = page.evaluate(
        "() => ({scroll: document.documentElement.scrollWidth, view: innerWidth})"
    )
    assert metrics["scroll"] <= metrics["view"], metrics


def test_search_says_what_it_found_at_desktop_and_phone_widths(
    live_server, browser, embedded_sample, paper_factory
):
    ARTIFACTS.mkdir(exist_ok=True)
    radford = [
        paper_factory(
            title="Language Models are Few-Shot Learners",
            abstract="Scaling up language models greatly improves few-shot performance.",
            authors=["Tom B. Brown", "Alec Radford"],
        ).title,
        paper_factory(
            title="Unsupervised Representation Learning with Deep Convolutional GANs",
            abstract="We bridge supervised and unsupervised learning with convolutional nets.",
            authors=["Alec Radford", "Luke Metz"],
        ).title,
    ]
    person = Researcher.objects.create(display_name="Alec Radford", name_key="alec radford")
    Authorship.objects.filter(name="Alec Radford").update(researcher=person)
    containing = paper_search("dark matter halos", mode="keyword", limit=1).total
    assert 10 < containing <= 20  # more than the first page's 10
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.set_default_timeout(20_000)

        # Six papers of the sample contain "spreadsheet" (hybrid search said "More than 100
        # papers matching"); a real word, so the papers nearest to it in meaning follow (#43).
        assert page.goto(f"{live_server.url}/search?q=spreadsheet").status == 200
        _no_overflow(page)
        assert page.locator("#res-h").inner_text() == "6 papers contain the word “spreadsheet”"
        items = page.locator("#res-h ~ ol.paper-list").first.locator("li.paper-item")
        assert items.count() == 6 and page.locator("#related-h").count() == 1
        assert page.locator("#related-h ~ ol.paper-list li.paper-item").count() > 0
        # Each shows the passage with the word, marked.
        for item in items.all():
            marks = item.locator(".abstract-snippet mark").all_inner_texts()
            assert marks and all(re.fullmatch(r"(?i)spreadsheets?", m) for m in marks), marks
        assert "More than" not in page.inner_text("#results")
        page.screenshot(path=str(ARTIFACTS / f"search-spreadsheet-{width}.png"), full_page=True)

        # Both parts: the papers with the three words, counted, the first 10 of them; then a
        # few of those close in meaning.
        assert page.goto(f"{live_server.url}/search?q=dark+matter+halos").status == 200
        _no_overflow(page)
        heading = page.locator("#res-h").inner_text()
        assert heading == f"{containing} papers contain the words “dark matter halos”", heading
        assert page.locator("#res-h ~ ol.paper-list").first.locator("li").count() == 10
        assert page.locator("#related-h").inner_text() == "Related by meaning"
        related = page.locator("#related-h ~ ol.paper-list li.paper-item h3")
        assert 0 < related.count() <= 5
        words = QueryWords("dark matter halos")
        for title in related.all_inner_texts():
            paper = Paper.objects.filter(title__startswith=title.split("$")[0][:40]).first()
            assert paper is not None and not words.all_in(f"{paper.title} {paper.abstract}")
        page.screenshot(path=str(ARTIFACTS / f"search-two-parts-{width}.png"), full_page=True)
        # Where the second part begins, as a reader scrolls to it.
        page.evaluate("() => document.querySelector('#related-h').scrollIntoView()")
        page.evaluate("() => scrollBy(0, -300)")
        page.screenshot(path=str(ARTIFACTS / f"search-related-{width}.png"))

        # A question about a paper of the sample in other words than its own, sorted by date:
        # the sort orders what was found, it keeps it (#43).
        question = "why might the timing of ice ages be impossible to forecast"
        for sort in ("relevance", "newest"):
            assert page.goto(f"{live_server.url}/search?q={question}&sort={sort}").status == 200
            related = page.locator("#related-h ~ ol.paper-list li.paper-item h3")
            assert related.count() >= 10, sort
            assert any("ice ages" in t for t in related.all_inner_texts()), sort

        # Errands and another field's words mean nothing here: the empty state, as for
        # made-up words.
        for query in ("cheap flights to paris", "tort liability in contract law"):
            assert page.goto(f"{live_server.url}/search?q={query}").status == 200
            assert page.locator("#related-h").count() == 0, query
            assert page.locator("#results li.paper-item").count() == 0, query

        # A person's name: the people it names first, then the papers that print it on their
        # byline (#43: "its words are not in any title or abstract").
        assert page.goto(f"{live_server.url}/search?q=Radford").status == 200
        assert page.locator("#res-h").inner_text() == "2 papers contain the word “Radford”"
        listed = page.locator("#res-h ~ ol.paper-list").first.locator("li.paper-item h3")
        assert set(listed.all_inner_texts()) == set(radford)
        text = page.inner_text("main")
        assert text.index("Alec Radford") < text.index("2 papers contain the word")

        # Words that nothing contains and nothing means: an empty state with real suggestions.
        assert page.goto(f"{live_server.url}/search?q=zzzqqqxx").status == 200
        _no_overflow(page)
        results = page.inner_text("#results")
        assert "No papers for “zzzqqqxx”" in results and "More than" not in results
        assert page.locator("#results li.paper-item").count() == 0
        suggestions = page.locator(".empty-state a")
        hrefs = [suggestions.nth(i).get_attribute("href") for i in range(suggestions.count())]
        categories = [h for h in hrefs if h and h.startswith("/categories/")]
        assert categories, hrefs
        page.screenshot(path=str(ARTIFACTS / f"search-nothing-{width}.png"), full_page=True)
        assert page.goto(live_server.url + categories[0]).status == 200
        page.close()
