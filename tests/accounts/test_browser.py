"""One real browser run: sign up, land on the chat, onboard, follow with htmx, see the paper
in the feed.

Drives Debian's Chromium (installed by .ci/run) through Playwright against pytest-django's
live server; the screenshot lands in test-artifacts/ for a human to look at."""

from __future__ import annotations

import re

from django.core import mail

from accounts.models import Follow
from tests.conftest import ARTIFACTS


def test_sign_up_onboard_follow_and_read_the_feed(
    live_server, browser_page, researcher_factory, authored_paper, settings
):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    hopper = researcher_factory("Grace Hopper", paper_count=1)
    authored_paper(
        hopper, title="Compiling the future of programming languages", categories=["cs.PL"]
    )
    page = browser_page
    url = live_server.url

    page.goto(f"{url}/accounts/signup/")
    page.fill("input[name=email]", "browser@example.org")
    page.fill("input[name=password1]", "a-long-browser-password-7")
    page.fill("input[name=password2]", "a-long-browser-password-7")
    page.click("form.form button[type=submit]")
    # Verification is mandatory: open the link the email carries and confirm.
    page.wait_for_url(f"{url}/accounts/confirm-email/")
    link = re.search(r"https?://[^/\s]+(/accounts/confirm-email/\S+/)", mail.outbox[-1].body)[1]
    page.goto(f"{url}{link}")
    page.click("main form button[type=submit]")
    # The new reader lands on the chat, which offers the setup.
    page.wait_for_url(f"{url}/chat")
    assert page.locator("textarea[name=question]").is_visible()
    page.click("text=Set up your feed")
    page.wait_for_url(f"{url}/onboarding/fields")

    # Live search (htmx) narrows the categories; tick cs.PL and go on.
    page.fill("#field-q", "cs.PL")
    page.wait_for_selector("#category-picker legend:has-text('matching')")
    page.check("input[name=fields][value='cs.PL']")
    page.click("text=Save and continue")
    page.wait_for_url(f"{url}/onboarding/researchers")

    # Follow the suggested researcher without a page reload: htmx swaps the button.
    button = page.locator(f"#follow-{hopper.pk} button")
    assert button.get_attribute("aria-pressed") == "false"
    button.click()
    page.wait_for_selector(f"#follow-{hopper.pk} button[aria-pressed='true']")
    assert page.url == f"{url}/onboarding/researchers"
    assert "1 follower" in page.inner_text(f"#follow-{hopper.pk}")
    assert Follow.objects.filter(researcher=hopper, user__email="browser@example.org").exists()

    page.click("text=Continue")
    page.wait_for_url(f"{url}/onboarding/claim")
    page.click("text=Finish")
    page.wait_for_url(f"{url}/following")
    assert "Compiling the future of programming languages" in page.inner_text("main")
    assert "Grace Hopper" in page.inner_text("aside")

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "accounts-following.png"), full_page=True)
    assert (ARTIFACTS / "accounts-following.png").stat().st_size > 10_000
