"""Account settings, data export and account deletion."""

from __future__ import annotations

import json

import pytest
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from accounts.follows import researcher_follow
from accounts.models import Claim, Follow, Profile, SentDigest
from accounts.ownership.claims import researcher_claim
from researchers.models import Researcher

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db


def test_settings_change_digest_and_fields(client, user_factory, paper_factory):
    paper_factory(categories=["cs.CL", "cs.LG"])
    user = user_factory(fields=["cs.LG"])
    client.force_login(user)
    page = client.get("/accounts/").content.decode()
    assert 'href="/accounts/email/"' in page and 'href="/accounts/password/change/"' in page
    response = client.post(
        "/accounts/", {"digest_frequency": "daily", "fields": ["cs.CL", "cs.LG"]}
    )
    assert response["Location"] == "/accounts/"
    profile = Profile.objects.get(user=user)
    assert profile.digest_frequency == "daily" and profile.fields == ["cs.CL", "cs.LG"]
    response = client.post("/accounts/", {"digest_frequency": "hourly"})
    assert response.status_code == 200
    assert Profile.objects.get(user=user).digest_frequency == "daily"


def test_password_change_page_is_allauths(client, user_factory):
    client.force_login(user_factory())
    page = client.get("/accounts/password/change/")
    assert page.status_code == 200
    assert 'name="oldpassword"' in page.content.decode()


def test_export_is_a_json_download_of_the_users_data(client, user_factory, researcher_factory):
    user = user_factory(fields=["cs.LG"])
    other = user_factory()
    ada, alan = researcher_factory("Ada Lovelace"), researcher_factory("Alan Turing")
    researcher_follow(user=user, researcher=ada)
    researcher_follow(user=other, researcher=alan)
    researcher_claim(user=user, researcher=alan, message="It's me")
    SentDigest.objects.create(user=user, period_key="weekly:2026-W48", paper_count=3)
    SocialAccount.objects.create(user=user, provider="orcid", uid="0000-0002-1825-0097")
    client.force_login(user)
    response = client.get("/accounts/export/")
    assert response["Content-Type"].startswith("application/json")
    assert response["Content-Disposition"].startswith("attachment;")
    data = json.loads(response.content)
    assert data["user"]["email"] == user.email
    assert data["email_addresses"] == [{"email": user.email, "verified": True, "primary": True}]
    assert data["profile"]["fields_of_interest"] == ["cs.LG"]
    assert data["connected_accounts"] == [
        {
            "provider": "orcid",
            "uid": "0000-0002-1825-0097",
            "date_joined": data["connected_accounts"][0]["date_joined"],
        }
    ]
    assert [f["name"] for f in data["follows"]] == ["Ada Lovelace"]  # not the other user's
    assert data["claims"][0]["message"] == "It's me"
    assert data["sent_digests"][0]["papers"] == 3


def test_export_needs_sign_in(client):
    assert client.get("/accounts/export/")["Location"].startswith("/accounts/login/")


def reauthenticate(client, password: str = PASSWORD):
    return client.post("/accounts/reauthenticate/", {"password": password})


def test_delete_asks_for_the_password_again(client, user_factory):
    user = user_factory()
    client.force_login(user)  # a session, but no recent sign-in
    response = client.get("/accounts/delete/")
    assert response["Location"].startswith("/accounts/reauthenticate/")
    response = client.post("/accounts/delete/", {"confirm": "Delete my account"})
    assert response["Location"].startswith("/accounts/reauthenticate/")
    assert get_user_model().objects.filter(pk=user.pk).exists()
    # A wrong password does not count.
    assert reauthenticate(client, "not-the-password").status_code == 200
    assert client.get("/accounts/delete/")["Location"].startswith("/accounts/reauthenticate/")
    assert reauthenticate(client).status_code == 302
    assert client.get("/accounts/delete/").status_code == 200
    response = client.post("/accounts/delete/", {"confirm": "Delete my account"})
    assert response["Location"] == "/"
    assert not get_user_model().objects.filter(pk=user.pk).exists()


def test_delete_needs_the_confirmation_phrase(client, user_factory):
    user = user_factory()
    client.force_login(user)
    reauthenticate(client)
    response = client.post("/accounts/delete/", {"confirm": "yes"})
    assert response.status_code == 200 and "exactly" in response.content.decode()
    assert get_user_model().objects.filter(pk=user.pk).exists()


def test_delete_removes_the_account_and_its_follows_and_claims(
    client, user_factory, researcher_factory
):
    user, other = user_factory(), user_factory()
    ada = researcher_factory("Ada Lovelace")
    researcher_follow(user=user, researcher=ada)
    researcher_follow(user=other, researcher=ada)
    researcher_claim(user=user, researcher=ada)
    Token.objects.create(user=user)
    client.force_login(user)
    reauthenticate(client)
    response = client.post("/accounts/delete/", {"confirm": "Delete my account"})
    assert response["Location"] == "/"
    assert not get_user_model().objects.filter(pk=user.pk).exists()
    assert not Follow.objects.filter(user_id=user.pk).exists()
    assert not Claim.objects.filter(user_id=user.pk).exists()
    assert not EmailAddress.objects.filter(user_id=user.pk).exists()
    assert not Token.objects.filter(user_id=user.pk).exists()
    assert Follow.objects.filter(user=other).count() == 1  # others untouched
    assert Researcher.objects.filter(pk=ada.pk).exists()
    assert "_auth_user_id" not in client.session


def test_api_token_can_be_created_and_replaced(client, user_factory):
    user = user_factory()
    client.force_login(user)
    client.post("/accounts/api-token/")
    first = Token.objects.get(user=user).key
    assert first in client.get("/accounts/").content.decode()
    client.post("/accounts/api-token/")
    assert Token.objects.get(user=user).key != first


def test_claims_are_reviewed_by_staff_in_the_admin(
    client, user_factory, researcher_factory, django_user_model
):
    claim = researcher_claim(user=user_factory(), researcher=researcher_factory())
    staff = django_user_model.objects.create_superuser("boss", "boss@example.org", "pw")
    client.force_login(staff)
    response = client.post(
        "/admin/accounts/claim/", {"action": "confirm_claims", "_selected_action": [claim.pk]}
    )
    assert response.status_code == 302
    claim.refresh_from_db()
    assert claim.status == Claim.Status.CONFIRMED and claim.reviewed_by == staff


def test_non_staff_cannot_reach_the_claims_admin(client, user_factory, researcher_factory):
    claim = researcher_claim(user=user_factory(), researcher=researcher_factory())
    client.force_login(user_factory())
    response = client.post(
        "/admin/accounts/claim/", {"action": "confirm_claims", "_selected_action": [claim.pk]}
    )
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    claim.refresh_from_db()
    assert claim.status == Claim.Status.PENDING


def test_the_settings_page_names_everything_the_export_holds_and_what_the_token_opens(
    client, user_factory
):
    from accounts.account_data import user_export

    user = user_factory()
    client.force_login(user)
    page = " ".join(client.get("/accounts/").content.decode().split())
    said = page[page.index("Everything we store about you") :][:600]
    # Each part of the export, as the page words it.
    words = {
        "email_addresses": "email addresses",
        "connected_accounts": "connected accounts",
        "profile": "digest settings",
        "follows": "follows of researchers",
        "institution_follows": "institutions",
        "claims": "claims",
        "reports": "reports of wrong matches",
        "sent_digests": "sent digests",
        "conversations": "conversations",
        "library": "your library",
        "saved_searches": "saved searches with their alerts",
        "not_relevant": "marked not relevant",
    }
    held = set(user_export(user=user)) - {"exported_at", "user"}
    assert held == set(words), "a new part of the export: name it on the settings page"
    assert [key for key, word in words.items() if word not in said] == []
    # The account leads to the reader's library, searches and recommendations, and the footer
    # to the searches and the next digest.
    for href in ('href="/me/library"', 'href="/me/searches"', 'href="/following#recommendations"'):
        assert href in page[: page.index("<footer")], href
    assert 'href="/me/digest"' in page[page.index("<footer") :]
    token = page[page.index('id="api"') :][:900]
    assert "/api/v1/me/" in token and "/api/v1/conflicts/" in token
