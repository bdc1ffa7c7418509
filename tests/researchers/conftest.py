"""Factories for researchers, shared by the researcher, institution and site page tests."""

from __future__ import annotations

import itertools

import pytest

from researchers.models import Researcher

_n = itertools.count(1)


@pytest.fixture
def researcher_factory(db):
    """Create a Researcher; `name_key` follows the display name unless given."""

    def make(display_name: str | None = None, **fields) -> Researcher:
        name = display_name or f"Researcher Number{next(_n)}"
        fields.setdefault("name_key", name.lower())
        return Researcher.objects.create(display_name=name, **fields)

    return make


@pytest.fixture
def link_author(db):
    """Attach an existing authorship (paper, position) to a researcher, as matching would."""

    def link(paper, position: int, researcher: Researcher) -> None:
        paper.authorships.filter(position=position).update(researcher=researcher)

    return link
