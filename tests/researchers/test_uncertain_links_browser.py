"""In a real browser: a curator works through the uncertain links' queue at desktop and phone
widths, under the strict CSP, and confirms one."""

from __future__ import annotations

from papers.models import Authorship
from researchers.models import CurationEntry
from tests.conftest import ARTIFACTS, signed_in_browser_page

QUEUE = "/admin/researchers/researcher/curation/uncertain/"


def test_a_curator_confirms_an_uncertain_link(
    browser, live_server, researcher_factory, paper_factory, link_author, curator
):
    # As matching leaves it when only the slot and the family name agree (the recorded S2 list
    # of 2312.09402 spells him "Matteo Cinelli"; this byline prints "Marco").
    paper = paper_factory(
        arxiv_id="2312.09402",
        authors=["Ljubisa Bojic", "Marco Cinelli", "Dubravko Culibrk", "Boris Delibasic"],
    )
    for position, name in enumerate(["Ljubiša Bojić", "Matteo Cinelli"], start=1):
        link_author(paper, position, researcher_factory(name))
    paper.authorships.filter(position=1).update(match_method="exact", match_confidence=1.0)
    paper.authorships.filter(position=2).update(match_method="same_slot", match_confidence=0.5)
    page, errors = signed_in_browser_page(browser, live_server, curator)

    page.goto(f"{live_server.url}/admin/researchers/researcher/curation/")
    page.click("text=Uncertain links to check…")
    page.wait_for_url(f"{live_server.url}{QUEUE}")
    row = page.inner_text("table.uncertain tbody")
    assert "Marco Cinelli" in row and "Matteo Cinelli" in row
    assert "the same place in the list and the same family name, 0.50" in row
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "uncertain-links-desktop.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(ARTIFACTS / "uncertain-links-phone.png"), full_page=True)

    page.fill("table.uncertain input[name=note]", "Same person: the PDF's footnote")
    page.click("table.uncertain button[value=confirm]")
    page.wait_for_url(f"{live_server.url}{QUEUE}?page=1")
    assert "Marco Cinelli: link confirmed" in page.inner_text("body")
    assert "No uncertain links left to check." in page.inner_text("#content")
    link = Authorship.objects.get(paper=paper, position=2)
    assert (link.match_method, link.match_confidence) == ("curator", 1.0)
    assert CurationEntry.objects.get().note == "Same person: the PDF's footnote"
    assert page.evaluate("window.__cspViolations") == []
    # The admin's pages name no icon: Chromium asks /favicon.ico, which leads to the site's.
    assert errors == []
