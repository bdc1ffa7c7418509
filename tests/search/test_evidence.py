"""The rule's second way asks the keyword engine in two looks: a page's nearest papers, then,
only where none of them holds the query, the rest of the pool (a phrase search among 101
papers cost 0.8-2.1 ms at 1M papers, among 10 0.3-0.4). Where a page's nearest hold it, they
alone fix its sense."""

from __future__ import annotations

from wovepaper.lib.search.evidence import FIRST_LOOK, Meaning, means_something_here


def _rule(holders: set[int], asked: list[tuple[int, int]]):
    """Ranks 0.. of the nearest papers; those in `holders` hold the query as written."""

    def nearest_holding(start: int, end: int) -> list[int]:
        asked.append((start, end))
        return [rank for rank in range(start, end) if rank in holders]

    return nearest_holding


def test_a_page_of_nearest_holding_the_query_fixes_its_sense_without_looking_deeper(settings):
    settings.SEARCH_MEANING_NEAREST_HOLDING = 101
    asked: list[tuple[int, int]] = []
    meaning = means_something_here(0.2, lambda: 1.0, _rule({3, 40}, asked))
    assert meaning == Meaning(True, (3,)) and asked == [(0, FIRST_LOOK)]


def test_the_rest_of_the_pool_is_asked_only_where_no_near_paper_holds_it(settings):
    settings.SEARCH_MEANING_NEAREST_HOLDING = 101
    asked: list[tuple[int, int]] = []
    meaning = means_something_here(0.2, lambda: 1.0, _rule({27, 80}, asked))
    assert meaning == Meaning(True, (27, 80)) and asked == [(0, FIRST_LOOK), (FIRST_LOOK, 101)]
    asked.clear()
    assert means_something_here(0.2, lambda: 1.0, _rule(set(), asked)) == Meaning(False)
    assert asked == [(0, FIRST_LOOK), (FIRST_LOOK, 101)]
    # Looking no deeper than a page asks once; the words must still be held.
    settings.SEARCH_MEANING_NEAREST_HOLDING = 5
    asked.clear()
    assert means_something_here(0.2, lambda: 1.0, _rule({27}, asked)) == Meaning(False)
    assert asked == [(0, 5)]
    assert means_something_here(0.2, lambda: 0.0, _rule({2}, [])) == Meaning(False)


def test_above_the_threshold_no_paper_is_asked_for_the_words(settings):
    asked: list[tuple[int, int]] = []
    assert means_something_here(0.9, lambda: 1.0, _rule({1}, asked)) == Meaning(True)
    assert asked == []
