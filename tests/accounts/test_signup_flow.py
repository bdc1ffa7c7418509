"""Sign-up to onboarding to follow to feed, through the real allauth views."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import override_settings

from accounts.models import Follow, Profile

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db


def test_signup_onboarding_follow_feed(client, researcher_factory, authored_paper, paper_factory):
    turing = researcher_factory("Alan Turing", paper_count=1)
    paper = authored_paper(turing, title="On computable numbers, revisited", categories=["cs.LO"])
    paper_factory(title="A paper by nobody we follow", categories=["cs.LO"])

    response = client.post(
        "/accounts/signup/",
        {"email": "new@example.org", "password1": PASSWORD, "password2": PASSWORD},
    )
    # Verification is mandatory: the new user confirms the address from the email first.
    assert response.status_code == 302
    assert response["Location"] == "/accounts/confirm-email/"
    user = get_user_model().objects.get(email="new@example.org")
    assert user.profile.onboarding == Profile.Onboarding.PENDING
    assert "_auth_user_id" not in client.session
    response = client.post(confirmation_path(mail.outbox[-1], "new@example.org"))
    # The new reader lands on the chat, as on the reference site, which offers the setup.
    assert response["Location"] == "/chat"

    # After that the reader goes where they asked, and the page offers the setup; the
    # chat's setup link starts onboarding with fields.
    following = client.get("/following")
    assert following.status_code == 200 and "Finish setting up" in following.content.decode()
    landing = client.get("/chat").content.decode()
    assert "data-onboarding" in landing and 'href="/onboarding/"' in landing
    assert 'name="question"' in landing
    assert client.get("/onboarding/")["Location"] == "/onboarding/fields"
    page = client.get("/onboarding/fields")
    assert b"cs.LO" in page.content

    response = client.post("/onboarding/fields", {"fields": ["cs.LO"]})
    assert response["Location"] == "/onboarding/researchers"
    user.profile.refresh_from_db()
    assert user.profile.fields == ["cs.LO"]

    # Turing wrote the newest cs.LO paper, so he is suggested.
    page = client.get("/onboarding/researchers")
    assert "Alan Turing" in page.content.decode()
    assert f"/following/researchers/{turing.pk}/follow".encode() in page.content

    response = client.post(
        f"/following/researchers/{turing.pk}/follow", {"next": "/onboarding/researchers"}
    )
    assert response["Location"] == "/onboarding/researchers"
    assert Follow.objects.filter(user=user, researcher=turing).exists()

    assert client.post("/onboarding/researchers")["Location"] == "/onboarding/claim"
    claim_page = client.get("/onboarding/claim").content.decode()
    assert 'name="digest_frequency" value="weekly" checked' in claim_page
    assert (
        client.post("/onboarding/finish", {"digest_frequency": "daily"})["Location"] == "/following"
    )
    user.profile.refresh_from_db()
    assert user.profile.digest_frequency == "daily"
    assert user.profile.onboarding == Profile.Onboarding.COMPLETED

    feed = client.get("/following").content.decode()
    assert "On computable numbers, revisited" in feed
    assert paper.get_absolute_url() in feed
    assert "A paper by nobody we follow" not in feed


def confirmation_path(message, address: str) -> str:
    assert message.to == [address]
    return re.search(r"https?://[^/\s]+(/accounts/confirm-email/[^\s]+/)", message.body)[1]


def test_signup_does_not_tell_whether_an_address_has_an_account(client, user_factory):
    """An address with an account and one without get the same answer; the owner of the
    address gets an email saying someone tried to sign up with it."""
    taken = user_factory(email="taken@example.org")
    answers = {}
    for address in ("taken@example.org", "free@example.org"):
        mail.outbox.clear()
        response = client.post(
            "/accounts/signup/", {"email": address, "password1": PASSWORD, "password2": PASSWORD}
        )
        page = client.get(response["Location"]).content.decode()
        # The page differs by the address and the per-request CSRF token only.
        shown = re.sub(r"[A-Za-z0-9]{64}", "", page.replace(address, ""))
        answers[address] = (response.status_code, response["Location"], shown)
        assert [m.to for m in mail.outbox] == [[address]]
        told = "already exists" in mail.outbox[0].body
        assert told == (address == "taken@example.org")
        assert "already registered" not in page.lower()
        client.logout()
    assert answers["taken@example.org"] == answers["free@example.org"]
    assert get_user_model().objects.filter(email="taken@example.org").get() == taken


def test_signin_lands_on_the_chat_while_onboarding_is_unfinished(client, user_factory):
    user = user_factory(onboarding=Profile.Onboarding.PENDING)
    response = client.post("/accounts/login/", {"login": user.email, "password": PASSWORD})
    assert response["Location"] == "/chat"


def test_signin_goes_to_feed_when_onboarded(client, user_factory):
    user = user_factory()
    response = client.post("/accounts/login/", {"login": user.email, "password": PASSWORD})
    assert response["Location"] == "/following"


def test_failed_signins_are_rate_limited(client, user_factory):
    user = user_factory()
    blocked = "Too many failed login attempts"
    pages = [
        client.post("/accounts/login/", {"login": user.email, "password": "wrong"}).content.decode()
        for _ in range(6)
    ]
    # 5 failures per 5 minutes per account (ACCOUNT_RATE_LIMITS["login_failed"]); the sixth
    # attempt is refused before the password is even checked.
    assert [blocked in page for page in pages] == [False] * 5 + [True]
    response = client.post("/accounts/login/", {"login": user.email, "password": PASSWORD})
    assert blocked in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_signin_attempts_per_address_are_rate_limited(client, user_factory, settings):
    settings.ACCOUNT_RATE_LIMITS = {**settings.ACCOUNT_RATE_LIMITS, "login": "3/m/ip"}
    user = user_factory()
    codes = [
        client.post("/accounts/login/", {"login": user.email, "password": "wrong"}).status_code
        for _ in range(4)
    ]
    assert codes == [200, 200, 200, 429]


def test_signups_are_rate_limited(client, settings):
    settings.ACCOUNT_RATE_LIMITS = {**settings.ACCOUNT_RATE_LIMITS, "signup": "3/m/ip"}
    codes = [
        client.post(
            "/accounts/signup/", {"email": f"s{i}@example.org", "password1": "x", "password2": "y"}
        ).status_code
        for i in range(5)
    ]
    assert codes[:3] == [200, 200, 200]
    assert codes[3:] == [429, 429]


def test_password_reset_sends_email(client, user_factory):
    user = user_factory()
    mail.outbox.clear()
    response = client.post("/accounts/password/reset/", {"email": user.email})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    assert "/accounts/password/reset/key/" in mail.outbox[0].body


def test_account_pages_use_the_site_layout(client, user_factory):
    page = client.get("/accounts/login/").content.decode()
    assert 'class="brand"' in page and "footer" in page
    assert "Sign In · wovepaper" in " ".join(page.split())
    client.force_login(user_factory())
    page = client.get("/accounts/email/").content.decode()
    assert 'aria-label="Account"' in page  # the account sub-navigation


def test_social_sign_in_shows_only_configured_providers(client):
    page = client.get("/accounts/login/").content.decode()
    assert "/accounts/github/login/" not in page
    assert "/accounts/orcid/login/" not in page
    providers = {"github": {"APPS": [{"client_id": "id", "secret": "secret"}]}}
    with override_settings(SOCIALACCOUNT_PROVIDERS=providers):
        page = client.get("/accounts/login/").content.decode()
    assert "/accounts/github/login/" in page
    assert "/accounts/orcid/login/" not in page


def test_nav_and_footer_show_account_links(client, user_factory):
    page = client.get("/accounts/login/").content.decode()
    assert 'href="/accounts/signup/"' in page
    client.force_login(user_factory())
    page = client.get("/accounts/").content.decode()
    assert 'href="/following"' in page
    assert 'action="/accounts/logout/"' in page
    assert 'href="/accounts/export/"' in page


def test_connected_accounts_say_which_services_exist_and_why_none_is_set_up(client, user_factory):
    client.force_login(user_factory())
    page = " ".join(client.get("/accounts/3rdparty/").content.decode().split())
    # Offline (no keys): the page names the services and what is missing, not an empty heading.
    assert "Add a Third-Party Account" not in page
    assert "this site can sign in with ORCID and GitHub" in page
    assert "<code>ORCID_CLIENT_ID, ORCID_CLIENT_SECRET</code>" in page
    assert "What ORCID adds" in page and "Verified by ORCID" in page
    providers = {"orcid": {"APPS": [{"client_id": "id", "secret": "secret"}]}}
    with override_settings(SOCIALACCOUNT_PROVIDERS=providers):
        page = " ".join(client.get("/accounts/3rdparty/").content.decode().split())
    assert "/accounts/orcid/login/?process=connect" in page
    assert "None can be connected here" not in page
