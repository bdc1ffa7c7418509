"""Name normalisation and byline alignment, on names from the recorded responses."""

from __future__ import annotations

import pytest

from papers.authors import split_authors
from researchers.author_list_alignment import SAME_SLOT, align_authors, align_links, lists_disagree
from researchers.names import (
    EXACT,
    FAMILY_VARIANT,
    INITIALS,
    NEAR_GIVEN,
    NICKNAME,
    REORDERED,
    best_display_name,
    is_person,
    name_key,
    name_match,
    parse_name,
    person_part,
)
from tests.sources.conftest import load, recorded_s2_papers


def name_similarity(a: str, b: str) -> float:
    """`name_match`'s score alone."""
    return name_match(a, b)[0]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Édouard Grave", "Grave, Edouard"),  # accents, reordered with a comma
        ("E. Grave", "Édouard Grave"),  # initials
        ("M.-A. Lachaux", "Marie-Anne Lachaux"),  # hyphenated given names as initials
        ("L. van Beethoven", "Ludwig van Beethoven"),  # particles
        ("Wei Wang", "Wang Wei"),  # family name first, no comma
        ("Miguel Bordallo López", "Miguel Bordallo L'opez"),  # a TeX accent gone wrong in S2
        ("Ljubisa Bojic", "Ljubiša Bojić"),
        ("Jose A. Moscoso", "José Alfredo Jiménez Moscoso"),
        ("Rubens Belfort Jr.", "Belfort, Jr., Rubens"),
    ],
)
def test_same_person_spellings_are_similar(a, b):
    assert name_similarity(a, b) >= 0.75


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("F. Liwicki", "Marcus Liwicki"),  # same surname, other initial
        ("Jian Li", "Wei Li"),
        ("Eric Schwitzgebel", "David Schwitzgebel"),
        ("Hugo Touvron", "Thibaut Lavril"),
        ("Thomas Smith", "Timothy Smith"),  # same initial, different given names
    ],
)
def test_different_people_are_not_similar(a, b):
    assert name_similarity(a, b) == 0.0


def test_name_key_folds_accents_order_and_punctuation():
    assert name_key("Grave, Édouard") == name_key("Édouard  Grave") == "edouard grave"
    assert name_key("Marie-Anne Lachaux") == "marie anne lachaux"
    assert parse_name("Ludwig van Beethoven").family == ("van", "beethoven")
    assert best_display_name("E. Duflo", "Esther Duflo", "Duflo, Esther") == "Esther Duflo"


def test_equal_counts_align_position_by_position():
    s2 = recorded_s2_papers()["2302.13971"]["authors"]
    byline = [
        "Hugo Touvron",
        "Thibaut Lavril",
        "Gautier Izacard",
        "Xavier Martinet",
        "Marie-Anne Lachaux",
        "Timothee Lacroix",
        "Baptiste Roziere",
        "Naman Goyal",
        "Eric Hambro",
        "Faisal Azhar",
        "Aurélien Rodriguez",
        "Armand Joulin",
        "Edouard Grave",
        "Guillaume Lample",
    ]
    assert align_authors(byline, [[a["name"]] for a in s2]) == list(range(14))


def test_same_surname_coauthors_align_to_their_own_ids():
    s2 = recorded_s2_papers()["2205.00965"]["authors"]  # F. Liwicki, M. Liwicki
    # The byline order swapped against the source: the initials decide, not the position.
    byline = ["Tosin P. Adewumi", "Marcus Liwicki", "Foteini Liwicki"]
    aligned = align_authors(byline, [[a["name"]] for a in s2])
    assert [s2[i]["authorId"] for i in aligned] == ["51221489", "1743758", "80342407"]


def test_unequal_counts_use_sequence_alignment():
    s2 = recorded_s2_papers()["2312.09402"]["authors"]
    # A byline missing the second author and with an extra one at the end.
    byline = ["Ljubisa Bojic", "Dubravko Culibrk", "Boris Delibasic", "Matthew Crosby"]
    aligned = align_authors(byline, [[a["name"]] for a in s2])
    assert [s2[i]["authorId"] if i is not None else None for i in aligned] == [
        "80762784",
        "2876527",
        "1726756",
        None,
    ]


def test_openalex_raw_and_display_names_both_count():
    work = load("openalex/work_W3188841554.json")
    spellings = [[a["author"]["display_name"], a["raw_author_name"]] for a in work["authorships"]]
    # Initials only, as the printed names are ("P. W. S. Butcher"), in arXiv's order.
    byline = [
        "J. C. Roberts",
        "J. W. Mearman",
        "P. W. S. Butcher",
        "H. M. Al-Maneea",
        "P. D. Ritsos",
    ]
    assert align_authors(byline, spellings) == [0, 1, 2, 3, 4]


def test_a_name_matching_nothing_is_left_unaligned():
    s2 = recorded_s2_papers()["2302.01339"]["authors"]
    assert align_authors(["Someone Else", "Eric Schwitzgebel"], [[a["name"]] for a in s2]) == [
        None,
        0,
    ]
    assert align_authors(["Anyone"], []) == [None]


def test_large_bylines_stay_fast():
    import time

    names = [f"Author{n} Person{n}" for n in range(1500)]
    source = [[n] for i, n in enumerate(names) if i != 700]
    started = time.monotonic()
    aligned = align_authors(names, source)
    assert time.monotonic() - started < 15
    assert aligned[700] is None and aligned[699] == 699 and aligned[701] == 700


# Real arXivRaw bylines (corpus: arxiv-oai/arxivsync/listrecords_arXivRaw_2014-01-16_...xml).
@pytest.mark.parametrize(
    "byline",
    ["CDF Collaboration: T. Aaltonen, et al", "PHENIX Collaboration, A. Adare, et al"],
)
def test_entries_that_name_no_person_are_never_paired(byline):
    names = [a.forenames + " " + a.keyname for a in split_authors(byline)]
    # A source listing the collaboration as an author (as S2 does) gets no pair for it either.
    source = [["PHENIX Collaboration"], ["CDF Collaboration"], ["T. Aaltonen"], ["A. Adare"]]
    aligned = align_authors(names, source)
    for name, index in zip(names, aligned, strict=True):
        if is_person(name):
            assert source[index][0] in name
        else:
            assert index is None
    assert [is_person(n) for n in names].count(True) == 1


@pytest.mark.parametrize(
    ("entry", "person"),
    [
        ("et al", ""),
        ("et al.", ""),
        ("and others", ""),
        ("BES Collaboration", ""),
        ("France Astrophysics Group", ""),  # an S2 "author" in the corpus
        ("Harvard-Smithsonian Center for Astrophysics", ""),
        ("CDF Collaboration: T. Aaltonen et al", "T. Aaltonen"),
        ("Deaglan J. Bartlett for the Planck Collaboration", "Deaglan J. Bartlett"),
        ("Gemini Team Rohan Anil", "Rohan Anil"),
        # papers.nonpersons' group words, which this rule once lacked (the person was lost).
        ("Jane Smith for the DES Survey", "Jane Smith"),
        ("J. Smith on behalf of the LHCb project", "J. Smith"),
        ("DES Survey", ""),
        ("Al Smith", "Al Smith"),
    ],
)
def test_team_words_glued_to_a_name_are_taken_off(entry, person):
    assert person_part(entry) == person


@pytest.mark.parametrize(
    ("a", "b", "method"),
    [
        ("Md. Aminul Islam", "Mohammad Aminul Islam", INITIALS),  # S2 writes "Md."
        ("Zh. I. Alferov", "Zhores I. Alferov", INITIALS),
        ("Yu. S. Kivshar", "Yuri S. Kivshar", INITIALS),
        ("Kate Burdekin", "Katherine Burdekin", NICKNAME),  # the nicknames package's table
        ("Jim Hinton", "James Hinton", NICKNAME),
        ("Alex Graves", "Alexander Graves", NICKNAME),
        ("Tian-Yu Zhang", "Tianyu Zhang", EXACT),
        ("Wang Wei", "Wei Wang", REORDERED),
    ],
)
def test_how_two_spellings_agree(a, b, method):
    score, how = name_match(a, b)
    assert how == method and score >= 0.75


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Zh. Alferov", "Zinaida Alferov"),  # "Zh." is not spelt in "Zinaida"
        ("Md. Aminul Islam", "Mahbub Aminul Islam"),
    ],
)
def test_multi_letter_initials_must_be_spelt_in_the_full_name(a, b):
    assert name_similarity(a, b) == 0.0


@pytest.mark.parametrize(
    ("near", "exact"),
    [("Weiwei Wang", "Wei Wang"), ("Junjie Li", "Jun Li"), ("Jiaqin Li", "Jiaqi Li")],
)
def test_near_miss_given_names_are_never_sure(near, exact):
    score, how = name_match(exact, near)
    assert how == NEAR_GIVEN and score < name_similarity(exact, exact) and score < 0.9
    # In byline order the near spelling is taken when nothing better is there...
    assert align_authors(["Hugo Touvron", exact], [["Hugo Touvron"], [near]]) == [0, 1]
    # ...but exact beats it, and out of byline order it is never taken.
    assert align_authors([exact], [[near], [exact]]) == [1]
    assert align_authors(["Hugo Touvron", exact], [[near], ["Hugo Touvron"]]) == [1, None]


def test_same_slot_and_family_name_pairs_with_low_confidence():
    byline = ["Hugo Touvron", "Xiaoming Li", "Gautier Izacard"]
    links = align_links(byline, [["Hugo Touvron"], ["Ming Li"], ["Gautier Izacard"]])
    assert [link.index for link in links] == [0, 1, 2]
    assert links[1].method == SAME_SLOT and links[1].confidence < 0.6
    assert links[0].method == EXACT and links[0].confidence == 1.0
    # Another Li in the list could take that slot: nothing is guessed.
    links = align_links(
        byline + ["Jian Li"], [["Hugo Touvron"], ["Ming Li"], ["Gautier Izacard"], ["Jian Li"]]
    )
    assert links[1] is None and links[3].index == 3


def test_same_slot_when_the_other_namesakes_are_paired():
    # 2302.01339's recorded S2 list has two Schwitzgebels. With the printed "Dan" against the
    # profile's "David", the other Schwitzgebel is paired on his own name, the slot is bounded
    # by paired neighbours, and the given names start alike: nothing else could take it.
    s2 = recorded_s2_papers()["2302.01339"]["authors"]
    source = [[a["name"]] for a in s2]
    assert [a["name"] for a in s2] == ["Eric Schwitzgebel", "David Schwitzgebel", "A. Strasser"]
    links = align_links(["Eric Schwitzgebel", "Dan Schwitzgebel", "Anna Strasser"], source)
    assert [link.index if link else None for link in links] == [0, 1, 2]
    assert links[1].method == SAME_SLOT and links[1].confidence < 0.6
    # Given names that start otherwise, beside a namesake: nothing is guessed.
    links = align_links(["Eric Schwitzgebel", "Ben Schwitzgebel", "Anna Strasser"], source)
    assert links[1] is None and links[0].index == 0
    # A namesake left unpaired could be the one in that slot: nothing is guessed either.
    links = align_links(
        ["Eric Schwitzgebel", "Dan Schwitzgebel", "Anna Strasser", "Ben Schwitzgebel"], source
    )
    assert links[1] is None


def test_author_lists_that_cannot_be_one_paper():
    people = [f"Author{n} Person{n}" for n in range(300)]
    assert lists_disagree(people, 4)  # a handful against hundreds
    assert lists_disagree(people[:4], 300)
    assert not lists_disagree(people[:40], 38)  # a source missing a few authors
    assert not lists_disagree(people[:12], 2)  # too few to say
    # An OpenAlex list cut at 100 may be shorter than the byline.
    assert not lists_disagree(people, 100, truncated=True)
    # "T. Aaltonen et al" stands for the hundreds a source lists.
    assert not lists_disagree(["CDF Collaboration: T. Aaltonen", "et al"], 600)


@pytest.mark.parametrize(
    ("a", "b", "method"),
    [
        # S2 in the corpus writes run-together capitals as initials ("GP Acharya", "NL Fias").
        ("G. P. Acharya", "GP Acharya", EXACT),
        ("Nikolaos L. Fias", "NL Fias", INITIALS),
        # A double family name read as given + family: never sure.
        ("José Alfredo Jiménez Moscoso", "José Alfredo Jiménez", FAMILY_VARIANT),
    ],
)
def test_capital_initials_and_double_family_names(a, b, method):
    score, how = name_match(a, b)
    assert how == method and score > 0.6
    if method == FAMILY_VARIANT:
        assert score < 0.75  # pairs only where the byline order puts it


def test_a_name_in_capitals_keeps_its_given_name():
    assert parse_name("BO YANG").given == ("bo",)
    assert parse_name("GP Acharya").given == ("g", "p")


def test_openalex_identity_is_taken_on_its_own_name_not_the_printed_one():
    # In the corpus' OpenAlex page, AlphaFold 3's authorship printed "Richard Evans" is given
    # to the identity "K Taki": the printed name agrees with the byline, the identity does not.
    from papers.models import Authorship
    from researchers.matching.align import align_paper
    from sources.openalex import parse_work

    page = load("openalex/works_from_publication_date_2023-01-01_page1.json")
    data = next(w for w in page["results"] if w["id"] == "https://openalex.org/W4396721167")
    work = parse_work(data)
    byline = [ship.raw_author_name for ship in work.authorships]
    authorships = [Authorship(position=i + 1, name=name) for i, name in enumerate(byline)]
    keys = align_paper(authorships, None, work)
    evans = byline.index("Richard Evans")
    assert work.authorships[evans].display_name == "K Taki"
    assert keys[evans].openalex is None
    # Everyone else is paired with their own identity.
    others = [k.openalex_id for i, k in enumerate(keys) if i != evans]
    assert others == [s.author_id for i, s in enumerate(work.authorships) if i != evans]
    assert keys[evans - 1].openalex_link.method == "exact"
