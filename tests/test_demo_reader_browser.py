"""A new reader on a fresh demo, in Debian's Chromium at 1280 and 390 px: signs up, saves a
search on a topic of the sample and sees what it found in /me/searches, /following, the private
alert feed and the digest preview; saves three papers and sees "Papers like this list"; claims a
researcher page with a message the curators' admin shows; once confirmed, edits the owner page
with one bad field and keeps the others. On every page, nothing is hidden under the fixed "Ask
the papers" bar, nothing scrolls sideways, no CSP violation, no console error.

The demo's data (the bundled sample, years old) is prepared once by `manage.py demo` itself,
offline; the archive's clock is the default ("auto"), which reads it as a sample."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.test import Client

from accounts.library.models import SearchAlert
from accounts.models import Claim
from papers.archive_time import archive_span_forget
from researchers.models import Researcher
from tests.accounts.test_header_browser import COVERED
from tests.conftest import ARTIFACTS, RECORD_VIOLATIONS, csp_violations

PASSWORD = "a-demo-reader-passphrase-46"
TOPIC = "dark matter"


def _looks_right(page, width: int, where: str) -> None:
    assert page.evaluate(COVERED) == [], (where, width)
    assert page.evaluate("document.documentElement.scrollWidth") <= width, (where, width)


def _sign_up(page, url: str, email: str) -> None:
    page.goto(f"{url}/accounts/signup/")
    page.fill("input[name=email]", email)
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.click("form.form button[type=submit]")
    page.wait_for_url(f"{url}/accounts/confirm-email/")
    link = re.search(r"https?://[^/\s]+(/accounts/confirm-email/\S+/)", mail.outbox[-1].body)[1]
    page.goto(f"{url}{link}")
    page.click("main form button[type=submit]")
    page.wait_for_url(f"{url}/chat")
    page.click("text=Skip setup for now")


@pytest.mark.django_db(transaction=True)
def test_a_new_reader_sees_the_loop_work_on_a_fresh_demo(live_server, browser, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Offline, as the demo is meant to run.
    settings.SEMANTIC_SCHOLAR_API_URL = "http://127.0.0.1:9/s2"
    settings.OPENALEX_API_URL = "http://127.0.0.1:9/openalex"
    settings.ROR_API_URL = "http://127.0.0.1:9/ror"
    settings.SITE_URL = settings.SITE_URL  # the demo sets it; the settings fixture restores it
    call_command("demo", no_serve=True, addrport="127.0.0.1:8000", stdout=StringIO())
    settings.ARCHIVE_CLOCK = "auto"  # the default; the suite's conftest sets "now"
    archive_span_forget()
    url = live_server.url
    curator = get_user_model().objects.create_superuser("curator", "cur@example.org", "pw-46-cur")
    admin = Client()
    admin.force_login(curator)
    # Two pages to claim, one per width: researchers of the demo with most papers.
    claimed = list(
        Researcher.objects.filter(merged_into__isnull=True, is_person=True)
        .exclude(figures_source="")
        .order_by("-paper_count", "pk")[:2]
    )

    for width, record in zip((1280, 390), claimed, strict=True):
        context = browser.new_context(viewport={"width": width, "height": 844})
        context.add_init_script(RECORD_VIOLATIONS)
        page = context.new_page()
        page.set_default_timeout(30_000)
        errors: list[str] = []
        page.on(
            "console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None
        )
        email = f"reader{width}@example.org"
        _sign_up(page, url, email)
        reader = get_user_model().objects.get(email=email)

        # A saved search on a topic of the sample finds its papers at once.
        page.goto(f"{url}/search?q={TOPIC.replace(' ', '+')}&mode=keyword")
        page.click("text=Save this search")
        page.click("button:has-text('Save and alert me')")
        page.wait_for_url(f"{url}/me/searches")
        found = list(
            SearchAlert.objects.filter(user=reader)
            .select_related("paper")
            .order_by("-found_at", "-pk")
        )  # as the pages list them
        assert found, "a search on a topic of the sample finds papers of the sample"
        title = found[0].paper.title
        searches = page.inner_text("main")
        assert "This archive is a sample of arXiv" in searches
        assert re.search(r"Last checked .*: found \d+ papers?", searches)
        assert "check_saved_searches" in searches  # when it is checked again, said plainly
        assert found[0].paper.arxiv_id in searches
        _looks_right(page, width, "/me/searches")
        page.screenshot(path=str(ARTIFACTS / f"demo-reader-searches-{width}.png"), full_page=True)
        atom = page.locator("input[aria-label='Atom feed address']").input_value()

        page.goto(f"{url}/following")
        # (text_content: the cards' headings are drawn upper-case)
        assert "From your saved searches" in page.text_content("main")
        assert found[0].paper.arxiv_id in page.inner_text(".alerts")
        _looks_right(page, width, "/following")
        feed = page.request.get(atom.replace("http://127.0.0.1:8000", url))
        assert feed.ok and found[0].paper.arxiv_id in feed.text()
        page.goto(f"{url}/me/digest")
        assert found[0].paper.arxiv_id in page.inner_text("main") or title[:40] in page.inner_text(
            "main"
        )
        _looks_right(page, width, "/me/digest")

        # Three papers of the search saved to a list: papers like it show on the list's page.
        page.goto(f"{url}/search?q={TOPIC.replace(' ', '+')}&mode=keyword")
        for n in range(3):
            # reader.js puts the reader's save control in each item's slot (`#save-<pk>`).
            item = page.locator(".paper-item").nth(n)
            item.locator("[id^='save-'] button").first.click()
            item.locator(".saved-in").wait_for()
        page.goto(f"{url}/me/library")
        page.get_by_role("link", name="Reading list").click()
        likes = page.locator("#recommendations li")
        assert likes.count() >= 1, page.inner_text("#recommendations")
        assert "Papers like this list" in page.text_content("#recommendations")
        _looks_right(page, width, "a list of three papers")
        page.screenshot(path=str(ARTIFACTS / f"demo-reader-list-{width}.png"), full_page=True)

        # "This is me", with a message the curators read.
        page.goto(f"{url}{record.get_absolute_url()}")
        page.click(f"#claim-{record.pk} button:has-text('This is me')")
        page.wait_for_selector("text=What ORCID would add")
        _looks_right(page, width, "the claim's confirm step")
        message = f"My staff page lists these papers ({width})."
        page.fill("textarea[name=message]", message)
        page.click("button:has-text('Send my claim')")
        page.wait_for_selector("text=curators")
        claim = Claim.objects.get(user=reader, researcher=record)
        assert claim.message == message
        assert message in admin.get(f"/admin/accounts/claim/{claim.pk}/change/").content.decode()

        # Confirmed by a curator, the owner edits the page with one bad field.
        admin.post(f"/admin/accounts/claim/{claim.pk}/change/", {"decision": "confirm"})
        claim.refresh_from_db()
        assert claim.status == Claim.Status.CONFIRMED
        page.goto(f"{url}/me/researchers/{record.pk}")
        page.fill("input[name=display_name]", f"{record.display_name} (owner)")
        page.fill("input[name=ror_id]", "https://ror.org/02bfwt286")  # not held by the demo
        page.fill("input[name=homepage]", "https://example.org/me")
        page.fill("input[name=reason]", "My name as I write it, and my homepage")
        page.click("section[aria-labelledby=profile-h] button:has-text('Save')")
        page.wait_for_selector("text=We hold no institution with this ROR id")
        assert page.input_value("input[name=homepage]") == "https://example.org/me"
        assert page.input_value("input[name=reason]") == "My name as I write it, and my homepage"
        assert page.input_value("input[name=display_name]") == f"{record.display_name} (owner)"
        record.refresh_from_db()
        assert record.homepage == ""  # nothing saved while a part is refused
        _looks_right(page, width, "the owner page")
        page.screenshot(path=str(ARTIFACTS / f"demo-reader-owner-{width}.png"), full_page=True)

        assert csp_violations(page) == []
        assert errors == []
        context.close()
