"""Save → alert → recommendation → export in Debian's Chromium, at 1280 and 390 px: a signed-in
reader saves a paper from a cached category page (the save control arrives through the reader's
fragment), saves a search from the search page, the hourly check announces a new paper on
/me/searches, the list's page recommends it as like the saved one and "Not relevant" takes it
away, and the list downloads as BibTeX; no page scrolls sideways, no CSP violation, no console
error."""

from __future__ import annotations

from datetime import timedelta

import bibtexparser
import pytest
from django.utils import timezone

from accounts.library import alerts
from accounts.library.models import RecommendationDismissal, SavedPaper, SavedSearch
from papers.search import PAPERS
from papers.search.embedding_stage import embed_papers
from tests.conftest import ARTIFACTS, csp_violations, signed_in_browser_page
from wovepaper.lib.search import backend_for


@pytest.mark.parametrize("width", [1280, 390])
def test_save_alert_export(live_server, browser, user_factory, paper_factory, width):
    saved_paper = paper_factory(title="Surface codes under circuit noise", categories=["quant-ph"])
    reader = user_factory()
    page, errors = signed_in_browser_page(browser, live_server, reader)
    page.set_viewport_size({"width": width, "height": 900})

    page.goto(f"{live_server.url}/categories/quant-ph")
    control = f"#save-{saved_paper.pk}"
    page.wait_for_selector(f"{control} button")
    page.locator(f"{control} button").click()
    page.wait_for_selector(f"{control} .saved-in")
    assert "Reading list" in page.inner_text(control)
    assert SavedPaper.objects.filter(reading_list__user=reader, paper=saved_paper).exists()
    assert page.evaluate("document.documentElement.scrollWidth") <= width

    page.goto(f"{live_server.url}/search?q=surface+codes&mode=keyword")
    page.get_by_role("link", name="Save this search").click()
    page.get_by_role("button", name="Save and alert me").click()
    page.wait_for_selector("text=Your searches (1 of at most 50)")
    saved = SavedSearch.objects.get(user=reader)
    assert saved.query == "surface codes" and saved.mode == "keyword"

    new = paper_factory(
        title="Surface codes with biased noise",
        categories=["quant-ph"],
        published=timezone.now() - timedelta(hours=6),
    )
    alerts.saved_search_check(saved=saved)
    page.reload()
    assert new.title in page.inner_text("main")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"library-alerts-{width}.png"), full_page=True)

    # Papers like the list: the new paper is close in meaning to the saved one; "Not relevant"
    # takes it away in place (htmx) and keeps the reader's word for it.
    embed_papers([saved_paper.pk, new.pk], feed_index=False)
    backend_for(PAPERS, "semantic").rebuild()
    page.goto(f"{live_server.url}/me/library")
    page.get_by_role("link", name="Reading list").click()
    recommendation = page.locator(f"#rec-{new.pk}")
    assert f"Close to “{saved_paper.title}”" in recommendation.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(path=str(ARTIFACTS / f"library-recommendations-{width}.png"), full_page=True)
    recommendation.get_by_role("button", name="Not relevant").click()
    recommendation.wait_for(state="detached")
    assert RecommendationDismissal.objects.filter(user=reader, paper=new).exists()

    with page.expect_download() as download:
        page.get_by_role("link", name="BibTeX").click()
    library = bibtexparser.parse_string(open(download.value.path(), encoding="utf-8").read())
    assert [e.fields_dict["eprint"].value for e in library.entries] == [saved_paper.arxiv_id]
    assert page.evaluate("document.documentElement.scrollWidth") <= width

    violations = csp_violations(page)
    page.context.close()
    assert violations == [] and errors == []
