"""Fields of interest: names from papers.taxonomy when present, else the codes in the archive."""

from __future__ import annotations

import sys
import types

import pytest

from accounts.categories import categories_search, category_codes, category_list

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_taxonomy(monkeypatch):
    monkeypatch.setitem(sys.modules, "papers.taxonomy", None)  # import fails: ImportError


def test_without_taxonomy_the_archive_codes_are_listed(no_taxonomy, paper_factory):
    paper_factory(categories=["math.AG", "hep-th"])
    paper_factory(categories=["cs.LG"])
    assert [c.code for c in category_list()] == ["cs.LG", "hep-th", "math.AG"]
    assert [c.code for c in categories_search("HEP")] == ["hep-th"]


def test_taxonomy_names_are_used_and_searchable(monkeypatch):
    taxonomy = types.SimpleNamespace(CATEGORIES={"cs.LG": "Machine Learning",
                                                 "stat.ML": "Machine Learning",
                                                 "math.AG": "Algebraic Geometry"})
    monkeypatch.setitem(sys.modules, "papers.taxonomy", taxonomy)
    import papers
    monkeypatch.setattr(papers, "taxonomy", taxonomy, raising=False)
    assert category_codes() == {"cs.LG", "stat.ML", "math.AG"}
    found = categories_search("machine learning")
    assert [(c.code, c.label) for c in found] == [("cs.LG", "cs.LG: Machine Learning"),
                                                  ("stat.ML", "stat.ML: Machine Learning")]
