"""Fixtures for the accounts tests: users with profiles, researchers, authored papers."""

from __future__ import annotations

import itertools

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.core.cache import cache

from accounts.models import Profile
from papers.models import Authorship
from researchers.models import Researcher
from researchers.names import name_key

_n = itertools.count(1)
PASSWORD = "correct-horse-battery-staple-42"


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    # The default hasher is slow on purpose; these tests sign up and in many times.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_cache():
    # allauth's rate limits and the category list live in the cache; tests must not share them.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def user_factory(db):
    def make(
        *,
        email: str | None = None,
        onboarding: str = Profile.Onboarding.COMPLETED,
        digest: str = Profile.Digest.WEEKLY,
        fields: list[str] | None = None,
        **extra,
    ):
        n = next(_n)
        email = email or f"reader{n}@example.org"
        user = get_user_model().objects.create_user(
            username=f"reader{n}", email=email, password=PASSWORD, **extra
        )
        EmailAddress.objects.create(user=user, email=email, primary=True, verified=True)
        Profile.objects.create(
            user=user, onboarding=onboarding, digest_frequency=digest, fields=fields or []
        )
        return user

    return make


@pytest.fixture
def researcher_factory(db):
    def make(name: str = "Ada Lovelace", **fields) -> Researcher:
        fields.setdefault("name_key", name_key(name))
        return Researcher.objects.create(display_name=name, **fields)

    return make


@pytest.fixture
def authored_paper(paper_factory):
    """A paper whose first author is matched to `researcher`."""

    def make(researcher: Researcher, **fields):
        paper = paper_factory(authors=[researcher.display_name, "Someone Else"], **fields)
        Authorship.objects.filter(paper=paper, position=1).update(researcher=researcher)
        return paper

    return make
