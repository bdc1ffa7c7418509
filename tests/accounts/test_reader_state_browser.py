"""The reader's parts of a shared page in Debian's Chromium: a signed-in reader opens pages
served from the page cache, reader.js makes the account links, follow button and save controls
theirs from /me/state, the buttons follow and save without a reload, and the next page is made
theirs from the state the browser kept, without asking the server again; no
Content-Security-Policy violation, no console error."""

from __future__ import annotations

import pytest
from django.core.signals import request_started
from django.test import Client

from accounts.library.lists import paper_save
from accounts.library.models import SavedPaper
from accounts.models import Follow
from tests.conftest import ARTIFACTS, csp_violations, signed_in_browser_page


@pytest.fixture
def state_requests():
    """The addresses of /me/state that reader.js asked the live server for."""
    seen: list[str] = []

    def note(sender, environ, **kwargs):
        if environ.get("PATH_INFO") == "/me/state" and environ.get("QUERY_STRING"):
            seen.append(environ.get("QUERY_STRING", ""))

    request_started.connect(note)
    yield seen
    request_started.disconnect(note)


def test_the_readers_follow_button_follows(
    live_server, browser, user_factory, researcher_factory, state_requests
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
    # The reader's own parts arrive: their account links, and their follow state once
    # reader.js has applied it (the account links are in the shared body, so they alone do not
    # say the state has come).
    page.wait_for_selector("#nav-account form.nav-signout")
    page.wait_for_selector("html[data-reader-state=applied]", state="attached")
    button = page.locator(f"#follow-{hopper.pk} button")
    assert button.get_attribute("aria-pressed") == "false"
    assert "1 follower" in page.inner_text(f"#follow-{hopper.pk}")
    assert page.locator("details.chat-dock").count() == 1
    token = page.locator("details.chat-dock input[name=csrfmiddlewaretoken]")
    assert token.get_attribute("value")

    button.click()
    page.wait_for_selector(f"#follow-{hopper.pk} button[aria-pressed='true']")
    assert "2 followers" in page.inner_text(f"#follow-{hopper.pk}")
    assert Follow.objects.filter(user=reader, researcher=hopper).exists()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "accounts-reader-state-follow.png"))

    # Reloaded: the shared body again; the follow gave the state a new address (asked for
    # once, right after the follow), and it says they follow now.
    page.reload()
    page.wait_for_selector(f"#follow-{hopper.pk} button[aria-pressed='true']")
    assert len(state_requests) == 2 and state_requests[0] != state_requests[1]
    page.locator(f"#follow-{hopper.pk} button").click()
    page.wait_for_selector(f"#follow-{hopper.pk} button[aria-pressed='false']")
    assert not Follow.objects.filter(user=reader, researcher=hopper).exists()
    violations = csp_violations(page)
    page.context.close()
    assert violations == [] and errors == []


@pytest.mark.parametrize("width", [1280, 390])
def test_the_next_page_is_the_readers_from_the_state_the_browser_kept(
    live_server, browser, user_factory, paper_factory, state_requests, width
):
    kept = paper_factory(title="A kept paper", categories=["math.CO"])
    new = paper_factory(title="A new paper", categories=["math.CO"])
    reader = user_factory()
    paper_save(user=reader, paper=kept)

    page, errors = signed_in_browser_page(browser, live_server, reader)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(live_server.url + kept.get_absolute_url())
    page.wait_for_selector(f"#save-{kept.pk} .saved-in")
    assert "Reading list" in page.inner_text(f"#save-{kept.pk}")
    assert len(state_requests) == 1

    # Another page, no change since: the state comes from the browser's cache.
    page.goto(live_server.url + "/categories/math.CO")
    page.wait_for_selector(f"#save-{new.pk} button")
    assert "Saved in Reading list" in page.inner_text(f"#save-{kept.pk}")
    assert len(state_requests) == 1
    page.locator(f"#save-{new.pk} button").click()
    page.wait_for_selector(f"#save-{new.pk} .saved-in")
    assert SavedPaper.objects.filter(paper=new, reading_list__user=reader).exists()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"accounts-reader-state-saves-{width}.png"))

    # The save changed the state's address: the next page asks for it again, and shows both.
    page.goto(live_server.url + new.get_absolute_url())
    page.wait_for_selector(f"#save-{new.pk} .saved-in")
    assert len(state_requests) >= 2
    violations = csp_violations(page)
    page.context.close()
    assert violations == [] and errors == []
