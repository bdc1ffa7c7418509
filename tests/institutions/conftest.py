# ruff: noqa: F811  (factory fixtures imported from tests/researchers/conftest.py)
from __future__ import annotations

import itertools

import pytest

from institutions.models import AuthorshipInstitution, Institution
from tests.researchers.conftest import (  # noqa: F401  (fixtures shared with researchers)
    api_settings,
    clean_cache,
    link_author,
    local_server,
    researcher_factory,
    sources,
)

_n = itertools.count(1)


@pytest.fixture
def institution_factory(db):
    def make(name: str | None = None, **fields) -> Institution:
        return Institution.objects.create(name=name or f"Institute {next(_n)}", **fields)

    return make


@pytest.fixture
def affiliate(db):
    """Link the authorship at `position` of `paper` to `institution`, as matching would."""

    def link(paper, position: int, institution: Institution) -> AuthorshipInstitution:
        authorship = paper.authorships.get(position=position)
        return AuthorshipInstitution.objects.create(
            authorship=authorship, institution=institution, paper=paper
        )

    return link
