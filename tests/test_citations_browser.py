"""A paper's references and citing papers in Debian's Chromium at desktop and phone widths,
from the demo's recorded citations (wovepaper/demo/recordings/citations.json): ViT's references
as OpenAlex recorded them, Adam cited by it in the archive, and a paper Semantic Scholar lists
as citing "Computing Machinery and Intelligence"; and the references Semantic Scholar's
references endpoint recorded for CorpusID:1033682, with influence and citing sentences
(tests/fixtures/semanticscholar). Screenshots are kept in test-artifacts/."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from papers.citations.load import (
    CitingPaperEdges,
    Coverage,
    citation_coverage_record,
    citations_load,
)
from sources.citation_answers import s2_reference_page
from tests.test_pages_browser import ARTIFACTS, WIDTHS
from wovepaper.demo.citations import demo_citations_load
from wovepaper.demo.replay import RECORDINGS


@pytest.fixture
def recorded_papers(transactional_db, paper_factory):
    """The archive rows of three recorded papers, titled and identified as recorded."""
    works = {
        w["answer"]["doi"].lower().removeprefix("https://doi.org/10.48550/arxiv."): w["answer"]
        for w in json.loads((RECORDINGS / "openalex_works.json").read_text())
    }
    papers = {
        arxiv_id: paper_factory(
            arxiv_id=arxiv_id,
            title=works[arxiv_id]["display_name"],
            openalex_id=works[arxiv_id]["id"].rsplit("/", 1)[1],
            cited_by_count=works[arxiv_id]["cited_by_count"],
            cited_by_source="openalex",
        )
        for arxiv_id in ("2010.11929", "1412.6980")
    }
    citing = json.loads((RECORDINGS / "citations.json").read_text())["semanticscholar_citing"]
    first = citing[0]["citing"][0]
    papers["turing-citing"] = paper_factory(
        arxiv_id=first["externalIds"]["ArXiv"], title=first["title"]
    )
    demo_citations_load()
    return papers


def _no_overflow(page) -> None:
    metrics = page.evaluate(
        "() => ({scroll: document.documentElement.scrollWidth, view: innerWidth})"
    )
    assert metrics["scroll"] <= metrics["view"], metrics


def test_references_and_citing_papers_at_desktop_and_phone_widths(
    live_server, browser, recorded_papers
):
    ARTIFACTS.mkdir(exist_ok=True)
    vit, adam = recorded_papers["2010.11929"], recorded_papers["1412.6980"]
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.set_default_timeout(20_000)

        assert page.goto(live_server.url + vit.get_absolute_url()).status == 200
        _no_overflow(page)
        assert page.locator("#references-h").inner_text() == "References (53)"
        coverage = page.locator("#references .coverage").inner_text()
        assert coverage.startswith("References known from OpenAlex, 28 Oct 2025.")
        assert "OpenAlex gives the cited works' ids only" in coverage
        linked = page.locator(f'#references a[href="{adam.get_absolute_url()}"]')
        assert linked.inner_text() == adam.title
        # The archive paper by title; the nine works OpenAlex names by an id alone in one line,
        # each a link out (they were nine lines of "title not given by OpenAlex").
        assert page.locator("#references .citation-list li").count() == 1
        assert page.locator("#references .untitled-references a").count() == 9
        page.locator("#references").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"citations-references-{width}.png"))

        page.locator(f'a[href="/papers/{vit.arxiv_id}/references"]').click()
        page.wait_for_url(f"**/papers/{vit.arxiv_id}/references")
        _no_overflow(page)
        assert page.locator(".citation-list li").count() == 1
        assert page.locator(".untitled-references a").count() == 49
        assert page.locator(".pager a[rel=next]").count() == 1
        # Neither a year nor a count to sort by: no sort links that would give the same list.
        assert page.locator("nav.sorts").count() == 0
        page.screenshot(path=str(ARTIFACTS / f"citations-references-page-{width}.png"))

        assert page.goto(live_server.url + adam.get_absolute_url()).status == 200
        _no_overflow(page)
        heading = page.locator("#cited-by-h").inner_text()
        assert heading == f"Cited by ({adam.cited_by_count:,}; 1 in this archive)"
        assert page.locator("#cited-by .citation-list li a").first.inner_text() == vit.title
        assert "OpenAlex lists no references for this paper" in page.inner_text("#references")
        page.locator("#cited-by").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"citations-cited-by-{width}.png"))

        turing_citing = recorded_papers["turing-citing"]
        assert page.goto(live_server.url + turing_citing.get_absolute_url()).status == 200
        _no_overflow(page)
        assert "Computing Machinery and Intelligence" in page.inner_text("#references")
        assert "has not been asked for this paper's own reference list" in page.inner_text(
            "#references"
        )
        page.close()


@pytest.fixture
def detailed_references(transactional_db, paper_factory, fixtures_dir):
    """A paper whose references are the references endpoint's recorded pages (CorpusID:1033682,
    with influence and citing sentences), written as the fetch writes them; the one influential
    reference, the conditional GAN, is an archive paper titled as recorded."""
    pages = [
        json.loads((fixtures_dir / "semanticscholar" / name).read_text())
        for name in (
            "paper_references_corpusid_1033682.0.json",
            "paper_references_corpusid_1033682.1.json",
        )
    ]
    cgan = paper_factory(arxiv_id="1411.1784", title="Conditional Generative Adversarial Nets")
    paper = paper_factory(title="A paper whose references Semantic Scholar details")
    works = [w for page in pages for w in s2_reference_page(page)]
    fetched = datetime(2023, 12, 27, tzinfo=UTC)
    citations_load([CitingPaperEdges(paper.pk, "s2", fetched, works)])
    citation_coverage_record(
        [Coverage(paper.pk, "s2", fetched, True, references_listed=len(works))]
    )
    return paper, cgan


def test_influential_references_and_their_context_at_desktop_and_phone_widths(
    live_server, browser, detailed_references
):
    ARTIFACTS.mkdir(exist_ok=True)
    paper, cgan = detailed_references
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.set_default_timeout(20_000)

        assert page.goto(live_server.url + paper.get_absolute_url()).status == 200
        _no_overflow(page)
        assert page.locator("#references-h").inner_text() == "References (156)"
        coverage = page.locator("#references .coverage").inner_text()
        assert coverage.startswith("References known from Semantic Scholar, 27 Dec 2023.")
        page.locator("#references").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"citations-contexts-{width}.png"))

        url = f"{live_server.url}/papers/{paper.arxiv_id}/references?sort=citations"
        assert page.goto(url).status == 200
        _no_overflow(page)
        marked = page.locator(".citation-list li", has=page.locator(".influential"))
        assert marked.count() == 1
        assert marked.locator("a").first.inner_text() == cgan.title
        assert marked.locator(".citation-context").count() == 2
        marked.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"citations-influential-{width}.png"))
        page.close()
