"""The search interface's contract, run against every engine that can run here (the database
of this run's vendor, and tantivy); OpenSearch is tested on recorded answers in
test_opensearch.py."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

from institutions.models import Institution
from institutions.name_search import institutions_search
from papers.search import PAPERS, paper_search
from researchers.models import Researcher
from researchers.name_search import researchers_search
from researchers.names import name_key
from wovepaper.lib.search import SearchQuery, Term, backend_for


def _pks(page) -> list[int]:
    return [item.pk for item in page.items]


def test_title_matches_rank_first_and_filters_hold(engine, paper_factory):
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
    engine()
    found = paper_search("graph")
    assert _pks(found) == [strong.pk, weak.pk]
    assert (found.total, found.total_is_capped, found.approximate) == (2, False, False)
    assert _pks(paper_search("graph", category="physics.chem-ph")) == [weak.pk]
    assert _pks(paper_search("graph", category="hep-th")) == []


def test_a_relevance_page_gives_each_item_its_score_best_first(engine, paper_factory):
    strong = paper_factory(title="Graph colouring", abstract="Graph graph colouring bounds.")
    weak = paper_factory(title="A survey of chemistry", abstract="We mention graph methods once.")
    engine()
    backend = backend_for(PAPERS)
    page = backend.search(SearchQuery(text="graph"))
    assert page.items == [strong.pk, weak.pk]
    # One score per item, the engine's own (what hybrid search may fuse by), best first.
    assert len(page.scores) == 2 and page.scores[0] > page.scores[1] > 0
    paged = backend.search(SearchQuery(text="graph", offset=1, limit=1))
    assert paged.items == [weak.pk] and paged.scores == page.scores[1:]
    assert backend.search(SearchQuery(text="graph", sort="newest")).scores == []


def test_stemming_and_every_word_must_match(engine, paper_factory):
    paper = paper_factory(title="Networks of oscillators", abstract="Coupled oscillators sync.")
    paper_factory(title="Oscillators alone", abstract="No graphs here.")
    engine()
    assert _pks(paper_search("network")) == [paper.pk]
    assert _pks(paper_search("coupled networks")) == [paper.pk]
    assert paper_search("network oscillators").total == 1
    assert paper_search("oscillators").total == 2


def test_any_word_finds_papers_with_some_of_the_words_most_first(engine, paper_factory):
    both = paper_factory(title="Coupled oscillators on networks", abstract="Synchrony.")
    one = paper_factory(title="Oscillators alone", abstract="Nothing else.")
    other = paper_factory(title="Social networks", abstract="Friends.")
    paper_factory(title="Unrelated topology", abstract="Nothing about it.")
    engine()
    backend = backend_for(PAPERS)
    assert backend.search(SearchQuery(text="networks oscillators")).items == [both.pk]
    found = backend.search(SearchQuery(text="networks oscillators", any_word=True))
    assert found.items[0] == both.pk and sorted(found.items[1:]) == sorted([one.pk, other.pk])
    assert found.total == 3
    relaxed = SearchQuery(text='"coupled oscillators" friends', any_word=True)
    assert sorted(backend.search(relaxed).items) == sorted([both.pk, other.pk])


def test_an_uncounted_search_gives_the_same_first_ids(engine, paper_factory):
    # Hybrid's any-word ranking wants the first ids alone: an engine may leave the count out
    # (tantivy then prunes the union's blocks that cannot reach the page), never change them.
    for number in range(6):
        paper_factory(
            title=f"Oscillators {number}" if number % 2 else f"Networks of oscillators {number}",
            abstract="Networks. " * (number + 1),
        )
    paper_factory(title="Unrelated topology", abstract="Nothing about it.")
    engine()
    backend = backend_for(PAPERS)
    query = SearchQuery(text="networks oscillators", any_word=True, limit=3)
    counted = backend.search(query)
    uncounted = backend.search(replace(query, counted=False))
    assert counted.total == 6 and not counted.total_is_capped
    assert uncounted.items == counted.items and len(uncounted.items) == 3
    if engine.name == "tantivy":
        assert (uncounted.total, uncounted.total_is_capped) == (3, True)
    else:
        assert uncounted.total == counted.total
    # A page the matches do not fill holds them all: its count is exact.
    whole = backend.search(replace(query, counted=False, limit=10))
    assert (whole.total, whole.total_is_capped) == (6, False)


def test_matching_says_which_of_given_papers_hold_every_word(engine, paper_factory):
    both = paper_factory(title="Networks of oscillators", abstract="Coupled oscillators sync.")
    one = paper_factory(title="Oscillators alone", abstract="No graphs here.")
    other = paper_factory(
        title="Coupled networks", abstract="Oscillators too.", categories=["physics.chem-ph"]
    )
    unasked = paper_factory(title="Coupled network oscillators", abstract="Not among the ids.")
    engine()
    backend = backend_for(PAPERS)
    ids = [both.pk, one.pk, other.pk]
    # Stemmed as the engine's own page compares them, and only among the ids given.
    assert backend.matching(SearchQuery(text="network oscillator"), ids) == {both.pk, other.pk}
    assert backend.matching(SearchQuery(text="oscillators"), ids) == set(ids)
    assert unasked.pk not in backend.matching(SearchQuery(text="oscillators"), [*ids, 10**9])
    # The filters hold too; stop words alone and an empty list match nothing.
    chem = (Term("categories", "physics.chem-ph"),)
    assert backend.matching(SearchQuery(text="oscillators", filters=chem), ids) == {other.pk}
    assert backend.matching(SearchQuery(text="the of"), ids) == set()
    assert backend.matching(SearchQuery(text="oscillators"), []) == set()


def test_words_held_says_which_words_some_paper_holds_by_the_engines_analysis(
    engine, paper_factory
):
    """The vocabulary that search by meaning's rule asks (wovepaper.lib.search.evidence): a
    word is held in a title, an abstract or a byline, stemmed as the engine stems it."""
    paper_factory(
        title="Spreadsheet errors in finance",
        abstract="Auditing spin-orbit models.",
        authors=["Alec Radford"],
    )
    engine()
    backend = backend_for(PAPERS)
    words = ["spreadsheets", "auditing", "radford", "spin-orbit", "zzzqqqxx", "timetable"]
    assert backend.words_held(words) == [True, True, True, True, False, False]
    assert backend.words_held([]) == []
    # A joined word is held when each part is, side by side or not, as the same words apart
    # are: no paper says "finance-auditing", and it is no more made up than "finance auditing".
    joined = ["finance-auditing", "radford's", "orbit-zzzqqqxx", "the-timetable", "c++"]
    assert backend.words_held(joined) == [True, True, False, False, False]


def test_matching_holds_a_phrase_in_any_field_among_given_papers(engine, paper_factory):
    in_title = paper_factory(title="Spin-orbit coupling in wires", abstract="Quantum wires.")
    in_abstract = paper_factory(title="Wires", abstract="Strong spin-orbit coupling here.")
    apart = paper_factory(title="Coupling of orbit and spin", abstract="Orbit and spin.")
    unasked = paper_factory(title="Spin-orbit coupling", abstract="Not among the ids.")
    engine()
    backend = backend_for(PAPERS)
    ids = [in_title.pk, in_abstract.pk, apart.pk]
    # A quoted phrase and a word the tokenizer splits are phrases: their words in order.
    for text in ('"spin orbit coupling"', "spin-orbit coupling", "wires spin-orbit"):
        assert backend.matching(SearchQuery(text=text), ids) == {in_title.pk, in_abstract.pk}, text
    # Every clause holds, each in a field of its own.
    assert backend.matching(SearchQuery(text='"orbit coupling" quantum'), ids) == {in_title.pk}
    assert unasked.pk not in backend.matching(SearchQuery(text='"spin orbit"'), ids)


def test_quoted_phrase_keeps_its_order(engine, paper_factory):
    phrase = paper_factory(title="Topological insulator surfaces")
    paper_factory(title="An insulator that is not topological")
    engine()
    assert paper_search("topological insulator").total == 2
    assert _pks(paper_search('"topological insulator"')) == [phrase.pk]


def test_date_filter_sorts_and_paging(engine, paper_factory):
    old = paper_factory(
        title="Quantum walks early", published=datetime(2010, 5, 1, tzinfo=UTC), cited_by_count=50
    )
    mid = paper_factory(
        title="Quantum walks middle",
        published=datetime(2016, 5, 1, tzinfo=UTC),
        cited_by_count=None,
    )
    new = paper_factory(
        title="Quantum walks late", published=datetime(2024, 5, 1, tzinfo=UTC), cited_by_count=7
    )
    engine()
    assert _pks(paper_search("quantum", date_from=date(2020, 1, 1))) == [new.pk]
    assert _pks(paper_search("quantum", date_to=date(2016, 5, 1))) == [old.pk]
    assert _pks(paper_search("quantum", date_from=date(2016, 5, 1), date_to=date(2016, 5, 2))) == [
        mid.pk
    ]
    assert _pks(paper_search("quantum", sort="newest")) == [new.pk, mid.pk, old.pk]
    assert _pks(paper_search("quantum", sort="oldest")) == [old.pk, mid.pk, new.pk]
    # Unknown citation counts come last.
    assert _pks(paper_search("quantum", sort="cited")) == [old.pk, new.pk, mid.pk]
    pages = [paper_search("quantum", sort="newest", limit=1, offset=o) for o in range(4)]
    assert [_pks(p) for p in pages] == [[new.pk], [mid.pk], [old.pk], []]
    assert {p.total for p in pages[:3]} == {3}


def test_syntax_characters_are_words_or_nothing(engine, paper_factory):
    paper = paper_factory(title="Spin-orbit coupling in $\\alpha$-RuCl3")
    engine()
    assert _pks(paper_search('spin-orbit "coupling')) == [paper.pk]
    assert _pks(paper_search("(coupling) RuCl3* ^~")) == [paper.pk]
    assert paper_search("AND OR NOT ( ) * : ^ ~").total == 0
    assert paper_search("   ").total == 0
    assert paper_search('title:spin "" -- +').total == 0


def test_an_edit_is_found_after_reindexing(engine, paper_factory):
    paper = paper_factory(title="Old words")
    engine()
    paper.title = "Fresh vocabulary"
    paper.save()
    engine()
    assert _pks(paper_search("fresh")) == [paper.pk]
    assert paper_search("old").total == 0


def _researcher(display_name: str, paper_count: int, **fields) -> Researcher:
    return Researcher.objects.create(
        display_name=display_name,
        name_key=name_key(display_name),
        paper_count=paper_count,
        **fields,
    )


def test_researchers_by_folded_word_prefixes_most_papers_first(engine):
    few = _researcher("Erwin Schrödinger", 3)
    many = _researcher("Martin Schröder", 40)
    grave = _researcher("Édouard Grave", 5)
    merged = _researcher("Edouard Grave", 1, merged_into=grave)
    engine()
    assert _pks(researchers_search("schr")) == [many.pk, few.pk]
    assert _pks(researchers_search("SCHRÖDINGER")) == [few.pk]
    found = researchers_search("edouard grav")
    assert _pks(found) == [grave.pk] and merged.pk not in _pks(found)
    assert _pks(researchers_search("schr", limit=1, offset=1)) == [few.pk]
    assert researchers_search("x").items == []


def test_a_given_name_finds_its_initial_in_a_byline(engine):
    initial = _researcher("I. Sommerville", 16)
    spelled = _researcher("Ian Sommerville", 4)
    other = _researcher("J. Sommerville", 9)
    namesake = _researcher("Ian Smith", 7)
    engine()
    assert _pks(researchers_search("Ian Sommerville")) == [initial.pk, spelled.pk]
    # Only the given names stand for initials: the family name is typed whole.
    assert _pks(researchers_search("Ian S")) == [initial.pk, namesake.pk, spelled.pk]
    assert _pks(researchers_search("Sommerville Ian")) == [spelled.pk]
    assert _pks(researchers_search("Sommerville")) == [initial.pk, other.pk, spelled.pk]


def test_institutions_by_word_prefixes_most_papers_first(engine):
    eth = Institution.objects.create(name="ETH Zurich", paper_count=90)
    uzh = Institution.objects.create(name="University of Zurich", paper_count=30)
    mpg = Institution.objects.create(name="Max Planck Society", paper_count=500)
    engine()
    assert _pks(institutions_search("zurich")) == [eth.pk, uzh.pk]
    assert _pks(institutions_search("ZUR univ")) == [uzh.pk]
    assert _pks(institutions_search("planck")) == [mpg.pk]
    assert _pks(institutions_search("zurich", limit=1, offset=1)) == [uzh.pk]


def test_engines_fold_accents_in_institution_names(engine):
    eth = Institution.objects.create(name="ETH Zürich", paper_count=90)
    engine()
    assert _pks(institutions_search("zurich")) == [eth.pk]


def test_related_lacking_the_words_asked_in_batches_are_the_same(engine, paper_factory):
    """Hybrid search's papers related by meaning that lack the words, asked of the keyword
    engine a batch at a time: the same first ones as asking every candidate at once, across
    batches where the first holds only papers with the words."""
    from wovepaper.lib.search.hybrid import HybridBackend

    with_words = [paper_factory(title=f"Spin glass {n}", abstract="Frustration.") for n in range(5)]
    without = [paper_factory(title=f"Magnet {n}", abstract="Frustration.") for n in range(4)]
    engine()
    keyword = backend_for(PAPERS)
    hybrid = HybridBackend(PAPERS, keyword=keyword, semantic=None)  # type: ignore[arg-type]
    candidates = [p.pk for p in [*with_words[:4], without[0], with_words[4], *without[1:]]]
    query = SearchQuery(text="spin glass")
    at_once = [i for i in candidates if i not in keyword.matching(query, candidates)]
    assert at_once == [p.pk for p in without]
    for count in (1, 2, 3, 4, 9):
        assert hybrid._without_the_words(candidates, query, count) == at_once[:count], count
    assert hybrid._without_the_words([], query, 2) == []
