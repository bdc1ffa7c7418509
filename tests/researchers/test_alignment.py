"""Name normalisation and byline alignment, on names from the recorded responses."""

from __future__ import annotations

import pytest

from researchers.alignment import align_authors
from researchers.names import best_display_name, name_key, name_similarity, parse_name
from tests.researchers.conftest import load, recorded_s2_papers


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
