"""Staff sign in to the admin through allauth's sign-in, under its rate limits (#12, item 2)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db

BLOCKED = "Too many failed login attempts"


def refused(response) -> bool:
    """Refused by a limit before the password is checked: per account (the form's error) or per
    address (429)."""
    return response.status_code == 429 or BLOCKED in response.content.decode()


@pytest.fixture
def staff(user_factory):
    return user_factory(is_staff=True, is_superuser=True)


def test_admin_login_sends_to_the_rate_limited_signin(client):
    response = client.get("/admin/login/?next=/admin/papers/paper/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=%2Fadmin%2Fpapers%2Fpaper%2F"
    # The admin's own redirect for a signed-out visitor ends there too.
    response = client.get("/admin/", follow=True)
    assert response.redirect_chain[-1][0] == "/accounts/login/?next=%2Fadmin%2F"


def test_admin_login_accepts_no_password(client, staff):
    client.raise_request_exception = False
    response = client.post(
        "/admin/login/?next=/admin/", {"username": staff.username, "password": PASSWORD}
    )
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert "_auth_user_id" not in client.session


def test_admin_brute_force_is_limited(client, staff):
    """Thirty wrong passwords, then the right one: refused, and still signed out."""
    answers = []
    for _ in range(30):
        client.post("/admin/login/", {"username": staff.username, "password": "wrong"})
        answers.append(
            client.post(
                "/accounts/login/?next=/admin/", {"login": staff.email, "password": "wrong"}
            )
        )
    # ACCOUNT_RATE_LIMITS["login_failed"]: 5 failures per 5 minutes per account.
    assert [refused(a) for a in answers] == [False] * 5 + [True] * 25
    response = client.post(
        "/accounts/login/?next=/admin/", {"login": staff.email, "password": PASSWORD}
    )
    assert refused(response)
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/")["Location"].startswith("/admin/login/")


def test_staff_sign_in_through_allauth_and_reach_the_admin(client, staff):
    response = client.post(
        "/accounts/login/?next=/admin/papers/", {"login": staff.email, "password": PASSWORD}
    )
    assert response["Location"] == "/admin/papers/"
    assert client.get("/admin/papers/").status_code == 200
    # Signed in, the admin's login page goes straight on.
    assert client.get("/admin/login/?next=/admin/papers/")["Location"] == "/admin/papers/"


def test_accounts_without_staff_access_are_refused_not_looped(client, user_factory):
    client.force_login(user_factory())
    response = client.get("/admin/")
    assert response["Location"].startswith("/admin/login/")
    assert client.get(response["Location"]).status_code == 403


@pytest.mark.parametrize(
    "next_url", ["https://evil.example/admin/", "//evil.example/admin/", "/accounts/"]
)
def test_next_stays_in_the_admin(client, next_url):
    response = client.get("/admin/login/", {"next": next_url})
    assert response["Location"] == "/accounts/login/?next=%2Fadmin%2F"


def test_a_createsuperuser_account_signs_in_without_a_confirmation_link(client, settings):
    from django.core.management import call_command

    settings.ACCOUNT_EMAIL_VERIFICATION = "mandatory"
    call_command(
        "createsuperuser",
        username="root",
        email="root@example.org",
        interactive=False,
        verbosity=0,
    )
    user = get_user_model().objects.get(username="root")
    user.set_password("a long passphrase 42")
    user.save()
    response = client.post(
        "/accounts/login/", {"login": "root@example.org", "password": "a long passphrase 42"}
    )
    assert response.status_code == 302
    assert "confirm-email" not in response["Location"]
    assert client.get("/admin/").status_code == 200
