"""Researcher factories; the recorded S2, OpenAlex and ROR answers they are matched against are
served by tests/sources/conftest.py's fixtures, imported here for the researchers' tests."""

from __future__ import annotations

import itertools

import pytest

from researchers.models import Researcher
from researchers.names import name_key
from tests.sources.conftest import (  # noqa: F401  (the recorded sources, for matching's tests)
    api_settings,
    clean_cache,
    local_server,
    sources,
)

_n = itertools.count(1)


@pytest.fixture
def researcher_factory(db):
    """Create a Researcher; `name_key` follows the display name unless given."""

    def make(display_name: str | None = None, **fields) -> Researcher:
        name = display_name or f"Researcher Number{next(_n)}"
        fields.setdefault("name_key", name_key(name))
        return Researcher.objects.create(display_name=name, **fields)

    return make


@pytest.fixture
def link_author(db):
    """Attach an existing authorship (paper, position) to a researcher, as matching would."""

    def link(paper, position: int, researcher: Researcher) -> None:
        paper.authorships.filter(position=position).update(researcher=researcher)

    return link


@pytest.fixture
def curator(db):
    """A staff user with the curation permission (and nothing else)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    user = get_user_model().objects.create_user(
        "curator", "curator@example.org", "pw-123456", is_staff=True
    )
    user.user_permissions.add(Permission.objects.get(codename="curate_researcher"))
    return user


@pytest.fixture
def reader_factory(db):
    """Plain site users, to follow and claim researchers."""
    from django.contrib.auth import get_user_model

    counter = itertools.count(1)

    def make(**extra):
        n = next(counter)
        return get_user_model().objects.create_user(
            f"reader{n}", f"reader{n}@example.org", "pw-123456", **extra
        )

    return make
