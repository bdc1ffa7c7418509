"""Fixtures for the API tests: researchers and institutions linked to papers, an API client."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from institutions.models import AuthorshipInstitution, Institution
from papers.models import Authorship
from researchers.models import Researcher, ResearcherExternalId
from researchers.names import name_key

_ror = itertools.count(1)


@pytest.fixture(autouse=True)
def _fresh_throttle_counters():
    # Throttle counters live in the cache; each test starts with a clean slate.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def api():
    return APIClient()


@pytest.fixture
def researcher_factory(db):
    def make(display_name: str = "Ada Lovelace", **fields) -> Researcher:
        fields.setdefault("name_key", name_key(display_name))
        return Researcher.objects.create(display_name=display_name, **fields)

    return make


@pytest.fixture
def institution_factory(db):
    def make(name: str = "University of Example", **fields) -> Institution:
        fields.setdefault("ror_id", f"0{next(_ror):06d}99")
        return Institution.objects.create(name=name, **fields)

    return make


@pytest.fixture
def attach(db):
    """Match a paper's author at `position` to `researcher`, optionally at `institution`."""

    def link(paper, position: int, researcher=None, institution=None) -> Authorship:
        authorship = Authorship.objects.get(paper=paper, position=position)
        if researcher is not None:
            authorship.researcher = researcher
            authorship.save(update_fields=["researcher"])
        if institution is not None:
            AuthorshipInstitution.objects.create(
                authorship=authorship, institution=institution, paper=paper
            )
        return authorship

    return link


@pytest.fixture
def world(paper_factory, researcher_factory, institution_factory, attach):
    """Five papers by Ada (two at Cambridge), one old-style id, categories across fields."""
    ada = researcher_factory("Ada Lovelace", paper_count=5, h_index=12, figures_source="s2")
    ResearcherExternalId.objects.create(researcher=ada, source="s2", value="1741101")
    alan = researcher_factory("Alan Turing", paper_count=2)
    cambridge = institution_factory(
        "University of Cambridge",
        country_code="GB",
        paper_count=2,
        researcher_count=1,
        ror_id="013meh722",
    )
    papers = []
    for day, cats in enumerate([["cs.LG"], ["cs.LG", "stat.ML"], ["hep-th"], ["stat.ML"]], start=1):
        paper = paper_factory(categories=cats, published=datetime(2024, 3, day, tzinfo=UTC))
        attach(paper, 1, ada, cambridge if day <= 2 else None)
        papers.append(paper)
    old = paper_factory(
        arxiv_id="astro-ph/9901001",
        categories=["astro-ph"],
        published=datetime(1999, 1, 4, tzinfo=UTC),
        title="An old-style paper",
        slug="an-old-style-paper",
    )
    attach(old, 1, ada)
    attach(old, 2, alan)
    papers.append(old)
    attach(papers[0], 2, alan)
    return {"ada": ada, "alan": alan, "cambridge": cambridge, "papers": papers, "old": old}
