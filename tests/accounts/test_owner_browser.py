"""In Chromium, at a desktop width and a phone's: a researcher signed in with ORCID says "this is
me" (verified at once by the ORCID tie), marks a paper "not mine" on their own page, and the
public page shows the paper gone and the change in its history, with the reason. Screenshots
land in test-artifacts/ for a human to look at."""

from __future__ import annotations

import json

import pytest
from allauth.socialaccount.models import SocialAccount

from accounts.models import Claim
from papers.models import Authorship
from researchers.models import ResearcherExternalId
from tests.conftest import ARTIFACTS, csp_violations, signed_in_browser_page

ORCID_ID = "0000-0002-1825-0097"


def _no_sideways_scroll(page) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"


@pytest.mark.parametrize("width", [1280, 390])
def test_claim_then_not_mine_then_public_history(
    live_server, browser, user_factory, researcher_factory, authored_paper, fixtures_dir, width
):
    record = json.loads((fixtures_dir / "orcid" / f"record_{ORCID_ID}.json").read_text())
    carberry = researcher_factory("Josiah Carberry")
    ResearcherExternalId.objects.create(
        researcher=carberry, source=ResearcherExternalId.ORCID, value=ORCID_ID
    )
    wrong = authored_paper(carberry, title="A namesake's paper on sea ice")
    authored_paper(carberry, title="Toward a Unified Theory of High-Energy Metaphysics")
    user = user_factory()
    SocialAccount.objects.create(user=user, provider="orcid", uid=ORCID_ID, extra_data=record)

    page, errors = signed_in_browser_page(browser, live_server, user)
    page.set_viewport_size({"width": width, "height": 900})
    url = live_server.url
    page.goto(f"{url}{carberry.get_absolute_url()}")
    # The button arrives with the reader's fragment (htmx), over the page every reader shares.
    page.click(f"#claim-{carberry.pk} button:has-text('This is me')")
    # The confirm step says what sending does, with a box for the curators.
    page.wait_for_selector("text=sending it verifies the page at once")
    assert not Claim.objects.exists()
    page.fill("textarea[name=message]", "My ORCID record lists the metaphysics paper.")
    page.click("button:has-text('Send my claim')")
    page.wait_for_selector("text=Verified by ORCID")
    assert Claim.objects.get(user=user).status == Claim.Status.CONFIRMED

    page.click(f"#claim-{carberry.pk} a:has-text('Correct your page')")
    page.wait_for_url(f"{url}/me/researchers/{carberry.pk}")
    _no_sideways_scroll(page)
    byline = Authorship.objects.get(paper=wrong, researcher=carberry)
    page.fill(f"#why-{byline.pk}", "Written by another Josiah Carberry, in Oslo")
    page.click(f"li:has(#why-{byline.pk}) button:has-text('Not mine')")
    page.wait_for_selector("text=The paper left your page")
    page.screenshot(path=str(ARTIFACTS / f"owner-page-{width}.png"), full_page=True)

    page.goto(f"{url}{carberry.get_absolute_url()}")
    papers = page.inner_text("#papers")
    assert "A namesake's paper on sea ice" not in papers
    assert "Toward a Unified Theory of High-Energy Metaphysics" in papers
    history = page.inner_text("section[aria-labelledby=history-h]")
    assert "Removed by the researcher" in history
    assert "Written by another Josiah Carberry, in Oslo" in history
    assert "verified by ORCID as their own page" in history
    _no_sideways_scroll(page)
    page.screenshot(path=str(ARTIFACTS / f"owner-history-{width}.png"), full_page=True)
    assert not csp_violations(page)
    assert not errors
