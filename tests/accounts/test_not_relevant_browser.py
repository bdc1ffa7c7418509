"""Undoing "Not relevant" in Debian's Chromium, at 1280 and 390 px: on a list's page the
reader marks a recommendation not relevant, the line that takes its place offers "Undo", and
the undo brings the recommendation back in place as it was; no page scrolls sideways, no CSP
violation, no console error. Screenshots of both states go to test-artifacts/."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.library.lists import paper_save, reading_list_default
from accounts.library.models import RecommendationDismissal
from papers.search import PAPERS
from papers.search.embedding_stage import embed_papers
from tests.conftest import ARTIFACTS, csp_violations, signed_in_browser_page
from wovepaper.lib.search import backend_for


@pytest.mark.parametrize("width", [1280, 390])
def test_not_relevant_then_undo(live_server, browser, user_factory, paper_factory, width):
    saved = paper_factory(title="Surface codes under circuit noise", categories=["quant-ph"])
    new = paper_factory(
        title="Surface codes with biased noise",
        categories=["quant-ph"],
        published=timezone.now() - timedelta(hours=6),
    )
    embed_papers([saved.pk, new.pk], feed_index=False)
    backend_for(PAPERS, "semantic").rebuild()
    reader = user_factory()
    reading_list = reading_list_default(user=reader)
    paper_save(user=reader, paper=saved, reading_list=reading_list)

    page, errors = signed_in_browser_page(browser, live_server, reader)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/me/library/{reading_list.pk}")
    recommendation = page.locator(f"#rec-{new.pk}")
    reason = f"Close to “{saved.title}”"
    assert reason in recommendation.inner_text()

    recommendation.get_by_role("button", name="Not relevant").click()
    undo_line = page.locator(f"#rec-undo-{new.pk}")
    undo_line.wait_for()
    assert "Marked not relevant — papers like it will rank lower." in undo_line.inner_text()
    expect(recommendation).to_have_count(0)
    assert RecommendationDismissal.objects.filter(user=reader, paper=new).exists()
    # The keyboard stays where it was: on the line's Undo (moved there once the line settles).
    expect(undo_line.get_by_role("button", name="Undo")).to_be_focused()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"not-relevant-undo-line-{width}.png"), full_page=True)

    undo_line.get_by_role("button", name="Undo").click()
    recommendation.wait_for()
    expect(undo_line).to_have_count(0)
    assert reason in recommendation.inner_text() and new.title in recommendation.inner_text()
    assert not RecommendationDismissal.objects.filter(user=reader).exists()
    expect(recommendation.get_by_role("button", name="Not relevant")).to_be_focused()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(path=str(ARTIFACTS / f"not-relevant-undone-{width}.png"), full_page=True)

    # Restored, it is a recommendation like any other: marking it again works in place.
    recommendation.get_by_role("button", name="Not relevant").click()
    undo_line.wait_for()
    assert RecommendationDismissal.objects.filter(user=reader, paper=new).exists()

    violations = csp_violations(page)
    page.context.close()
    assert violations == [] and errors == []
