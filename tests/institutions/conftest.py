# ruff: noqa: F811  (fixtures imported from tests/researchers/ and tests/sources/conftest.py)
from __future__ import annotations

import itertools

import pytest

from institutions.models import AuthorshipInstitution, Institution
from tests.researchers.conftest import link_author, researcher_factory  # noqa: F401  (shared)
from tests.sources.conftest import (  # noqa: F401  (the recorded sources, ROR's among them)
    api_settings,
    clean_cache,
    local_server,
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
