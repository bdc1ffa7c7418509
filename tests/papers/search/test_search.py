"""What is particular to the papers' database backends; the behaviour every engine shares is
in tests/search/test_contract.py."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from papers.search import database, fts5_query, paper_search


def test_fts5_query_quotes_every_word():
    assert fts5_query('a "b" OR c*') == '"a" "b" "OR" "c"'
    assert fts5_query('"dark matter" halo') == '"dark matter" "halo"'


def _percolation_papers(paper_factory) -> None:
    for n in range(7):
        paper_factory(
            title=f"Percolation on lattice {n}",
            cited_by_count=n % 3 or None,
            abstract="percolation " * (n % 4),
            published=datetime(2015 + n % 5, 1 + n, 1, tzinfo=UTC),
        )


def _pages(sort: str) -> list[list[int]]:
    return [
        [p.pk for p in paper_search("percolation", sort=sort, limit=3, offset=o).items]
        for o in (0, 3, 6)
    ]


@pytest.mark.postgres
@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_many_matches_in_date_order_stay_exact(paper_factory, monkeypatch, sort):
    """Under COUNT_CAP matches are fetched whole from the text index and sorted; over it the
    date index is walked. Both give the same pages; only the count stops at the cap."""
    _percolation_papers(paper_factory)
    few = _pages(sort)
    monkeypatch.setattr(database, "COUNT_CAP", 2)
    assert _pages(sort) == few and sum(len(page) for page in few) == 7
    found = paper_search("percolation", sort=sort)
    assert (found.total, found.total_is_capped, found.approximate) == (2, True, False)


@pytest.mark.postgres
@pytest.mark.parametrize("sort", ["relevance", "cited"])
def test_many_matches_ranked_from_a_bounded_pool_say_so(paper_factory, monkeypatch, sort):
    _percolation_papers(paper_factory)
    exact = paper_search("percolation", sort=sort, limit=7)
    assert (exact.total, exact.total_is_capped, exact.approximate) == (7, False, False)
    monkeypatch.setattr(database, "COUNT_CAP", 2)
    pooled = paper_search("percolation", sort=sort, limit=7)
    assert (pooled.total, pooled.total_is_capped, pooled.approximate) == (2, True, True)
    # Two candidates, ranked among themselves in the order the exact ranking gives them.
    in_pool = [p.pk for p in pooled.items]
    assert len(in_pool) == 2
    assert in_pool == [p.pk for p in exact.items if p.pk in in_pool]


@pytest.mark.sqlite
def test_fts5_counts_every_match(paper_factory, monkeypatch):
    _percolation_papers(paper_factory)
    monkeypatch.setattr(database, "COUNT_CAP", 2)
    found = paper_search("percolation")
    assert (found.total, found.total_is_capped, found.approximate) == (7, False, False)
