"""The reader's parts of a shared page in Debian's Chromium: a signed-in reader opens a
researcher page served from the page cache, htmx swaps in their account links and follow button
from /me/fragments, and the swapped-in button follows and unfollows without a reload; no
Content-Security-Policy violation, no console error."""

from __future__ import annotations

from django.test import Client

from accounts.models import Follow
from tests.conftest import ARTIFACTS, csp_violations, signed_in_browser_page


def test_the_swapped_in_follow_button_follows(
    live_server, browser, user_factory, researcher_factory
):
    hopper = researcher_factory("Grace Hopper")
    other = user_factory()
    Follow.objects.create(user=other, researcher=hopper)
    reader = user_factory()
    url = live_server.url + hopper.get_absolute_url()
    # Another reader's visit leaves the shared body in the cache.
    as_other = Client()
    as_other.force_login(other)
    assert as_other.get(hopper.get_absolute_url()).status_code == 200

    page, errors = signed_in_browser_page(browser, live_server, reader)
    response = page.goto(url)
    assert "private" in response.headers["cache-control"]
    # The reader's own parts arrive: their account links and their follow state.
    page.wait_for_selector("#nav-account form.nav-signout")
    button = page.locator(f"#follow-{hopper.pk} button")
    assert button.get_attribute("aria-pressed") == "false"
    assert "1 follower" in page.inner_text(f"#follow-{hopper.pk}")
    assert page.locator("details.chat-dock").count() == 1

    button.click()
    page.wait_for_selector(f"#follow-{hopper.pk} button[aria-pressed='true']")
    assert "2 followers" in page.inner_text(f"#follow-{hopper.pk}")
    assert Follow.objects.filter(user=reader, researcher=hopper).exists()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "accounts-fragment-follow.png"))

    # Reloaded: the shared body again, and the fragment says they follow now.
    page.reload()
    page.wait_for_selector(f"#follow-{hopper.pk} button[aria-pressed='true']")
    page.locator(f"#follow-{hopper.pk} button").click()
    page.wait_for_selector(f"#follow-{hopper.pk} button[aria-pressed='false']")
    assert not Follow.objects.filter(user=reader, researcher=hopper).exists()
    violations = csp_violations(page)
    page.context.close()
    assert violations == [] and errors == []
