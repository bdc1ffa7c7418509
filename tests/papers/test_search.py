from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from papers.search import fts5_query, paper_search


def test_search_ranks_title_matches_and_filters(paper_factory):
    strong = paper_factory(
        title="Graph neural networks for molecules",
        abstract="Graph networks predict molecular properties.",
    )
    weak = paper_factory(
        title="A survey of chemistry",
        abstract="We mention graph methods once.",
        categories=["physics.chem-ph"],
    )
    paper_factory(title="Unrelated topology", abstract="Nothing about it.")

    result = paper_search("graph")
    assert [p.pk for p in result.papers] == [strong.pk, weak.pk]
    assert result.total == 2

    only_chem = paper_search("graph", category="physics.chem-ph")
    assert [p.pk for p in only_chem.papers] == [weak.pk]


def test_search_date_filter_and_paging(paper_factory):
    old = paper_factory(title="Quantum walks early", published=datetime(2010, 5, 1, tzinfo=UTC))
    new = paper_factory(title="Quantum walks late", published=datetime(2024, 5, 1, tzinfo=UTC))
    assert [p.pk for p in paper_search("quantum", date_from=date(2020, 1, 1)).papers] == [new.pk]
    assert [p.pk for p in paper_search("quantum", date_to=date(2020, 1, 1)).papers] == [old.pk]
    newest = paper_search("quantum", sort="newest", limit=1)
    assert [p.pk for p in newest.papers] == [new.pk] and newest.total == 2
    second = paper_search("quantum", sort="newest", limit=1, offset=1)
    assert [p.pk for p in second.papers] == [old.pk]


def test_search_survives_syntax_characters(paper_factory):
    paper_factory(title="Spin-orbit coupling in $\\alpha$-RuCl3")
    assert paper_search('spin-orbit "coupling').total == 1
    assert paper_search("AND OR NOT ( ) *").total == 0
    assert paper_search("   ").total == 0


def test_fts5_query_quotes_every_word():
    assert fts5_query('a "b" OR c*') == '"a" "b" "OR" "c"'


def test_updated_title_is_searchable(paper_factory):
    paper = paper_factory(title="Old words")
    paper.title = "Fresh vocabulary"
    paper.save()
    assert paper_search("fresh").total == 1
    assert paper_search("old").total == 0


@pytest.mark.parametrize("sort", ["relevance", "newest", "oldest", "cited"])
def test_few_and_many_match_plans_give_the_same_pages(paper_factory, monkeypatch, sort):
    """Under COUNT_CAP matches are fetched whole from the text index and sorted; over it the
    database picks its own plan. Both must give the same order."""
    from papers import search

    for n in range(7):
        paper_factory(
            title=f"Percolation on lattice {n}",
            cited_by_count=n % 3 or None,
            abstract="percolation " * (n % 4),
            published=datetime(2015 + n % 5, 1 + n, 1, tzinfo=UTC),
        )
    few = [
        [p.pk for p in paper_search("percolation", sort=sort, limit=3, offset=o).papers]
        for o in (0, 3, 6)
    ]
    monkeypatch.setattr(search, "COUNT_CAP", 2)
    many = [
        [p.pk for p in paper_search("percolation", sort=sort, limit=3, offset=o).papers]
        for o in (0, 3, 6)
    ]
    assert few == many and sum(len(page) for page in few) == 7
    assert paper_search("percolation").total_is_capped
