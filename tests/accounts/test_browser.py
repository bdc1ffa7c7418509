"""One real browser run: sign up, onboard, follow with htmx, see the paper in the feed.

Drives Debian's Chromium (installed by .ci/run) through Playwright against pytest-django's
live server; the screenshot lands in test-artifacts/ for a human to look at."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connections

from accounts.models import Follow

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture
def browser_page(monkeypatch):
    if not CHROMIUM.exists():
        pytest.fail("Chromium is missing: run `apt-get install -y chromium` (as .ci/run does)")
    # Playwright's sync API runs an event loop in this thread; the ORM calls the test makes
    # around it are still plain synchronous calls.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(15_000)
        try:
            yield page
        finally:
            browser.close()
            # With Playwright's loop running, Django keyed the test's ORM calls to a connection
            # of that context; left open, it stops the test database from being dropped.
            connections.close_all()


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
