"""Sign-up does the same work for a taken address as for a new one (no timing tells which
addresses have accounts), and accounts never confirmed expire."""

from __future__ import annotations

from datetime import timedelta

from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import MD5PasswordHasher
from django.utils import timezone

from accounts.account_data import unverified_accounts_expire
from accounts.tasks import expire_unverified_accounts

PASSWORD = "a long enough passphrase 42"


class CountingHasher(MD5PasswordHasher):
    """The test's hasher: counts the hashes made, the slow step of a real sign-up."""

    algorithm = "counting_md5"
    made = 0

    def encode(self, password, salt):
        CountingHasher.made += 1
        return super().encode(password, salt)


def _hashes_for_signup(client, address: str) -> int:
    before = CountingHasher.made
    response = client.post(
        "/accounts/signup/", {"email": address, "password1": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 302
    client.logout()
    return CountingHasher.made - before


def test_a_taken_address_costs_the_same_hashing_as_a_new_one(client, user_factory, settings):
    settings.PASSWORD_HASHERS = [f"{__name__}.CountingHasher"]
    user_factory(email="taken@example.org")
    taken = _hashes_for_signup(client, "taken@example.org")
    new = _hashes_for_signup(client, "new@example.org")
    assert new >= 1
    assert taken == new


def test_accounts_never_confirmed_nor_used_expire(user_factory, settings, db):
    settings.ACCOUNT_UNVERIFIED_EXPIRE_DAYS = 7
    users = get_user_model().objects
    old = timezone.now() - timedelta(days=8)
    probe = users.create_user("probe", "probe@example.org", PASSWORD)
    EmailAddress.objects.create(user=probe, email=probe.email, verified=False, primary=True)
    fresh = users.create_user("fresh", "fresh@example.org", PASSWORD)
    used = users.create_user("used", "used@example.org", PASSWORD)
    staff = users.create_superuser("admin", "admin@example.org", PASSWORD)
    confirmed = user_factory(email="confirmed@example.org")  # its address is verified
    users.filter(pk__in=[probe.pk, used.pk, staff.pk, confirmed.pk]).update(date_joined=old)
    users.filter(pk=used.pk).update(last_login=timezone.now())

    assert expire_unverified_accounts.delay().get() == 1
    assert not users.filter(pk=probe.pk).exists()
    assert set(users.values_list("username", flat=True)) >= {
        fresh.username,
        used.username,
        staff.username,
        confirmed.username,
    }
    assert unverified_accounts_expire() == 0  # a rerun removes nothing more


def test_the_daily_expiry_reads_an_index(db):
    from django.db import connection

    with connection.cursor() as cursor:
        indexes = connection.introspection.get_constraints(cursor, "auth_user")
    assert "accounts_user_never_signed_in" in indexes
