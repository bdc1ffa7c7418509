"""Only people (and collaborations, marked as such) become authorships: real bylines from
../shared/corpus (arXivRaw page 0801.*, the snapshot's first lines) and real author lists of
Semantic Scholar (wovepaper/demo/recordings), each as the source wrote it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from papers import nonpersons
from papers.authors import author_list_cleaned, parse_display_name, split_authors

ROOT = Path(__file__).resolve().parent.parent.parent
S2_PAPERS = ROOT / "wovepaper" / "demo" / "recordings" / "semanticscholar_papers.json"


def _people(byline: str) -> list[tuple[str, bool]]:
    return [(a.display, a.person) for a in split_authors(byline)]


@pytest.mark.parametrize(
    ("arxiv_id", "byline", "expected"),
    [
        (
            "0801.4016",
            "T. Yamazaki, Y. Aoki, T. Blum, H. W. Lin, M. F. Lin, S. Ohta, S. Sasaki, R. J. "
            "Tweedie, and J. M. Zanotti, for the RBC and UKQCD Collaborations",
            [
                "T. Yamazaki",
                "Y. Aoki",
                "T. Blum",
                "H. W. Lin",
                "M. F. Lin",
                "S. Ohta",
                "S. Sasaki",
                "R. J. Tweedie",
                "J. M. Zanotti",
            ],
        ),
        (
            "0801.4186",
            "S. Aoki, H. Fukaya, S. Hashimoto, J. Noaki, T. Kaneko, H. Matsufuru, T. Onogi, N. "
            "Yamada, for the JLQCD Collaboration",
            [
                "S. Aoki",
                "H. Fukaya",
                "S. Hashimoto",
                "J. Noaki",
                "T. Kaneko",
                "H. Matsufuru",
                "T. Onogi",
                "N. Yamada",
            ],
        ),
        ("0704.0171", "F. Aharonian, et al", ["F. Aharonian"]),
        (
            "0801.4029",
            "G. Tagliaferri, L. Foschini, G. Ghisellini, L. Maraschi, G. Tosti and J. Albert, "
            "E. Aliu, H. Anderhub, P. Antoranz, C. Baixeras, et al. (MAGIC collaboration: 136 "
            "additional authors not shown, full list is given in the preprint)",
            [
                "G. Tagliaferri",
                "L. Foschini",
                "G. Ghisellini",
                "L. Maraschi",
                "G. Tosti",
                "J. Albert",
                "E. Aliu",
                "H. Anderhub",
                "P. Antoranz",
                "C. Baixeras",
            ],
        ),
        (
            "0801.3679",
            "Peter Anders (1), Uta Fritze (2), Richard de Grijs (3) ((1) University Utrecht, "
            "The Netherlands, (2) University of Hertfordshire, UK, (3) University of "
            "Sheffield, UK)",
            ["Peter Anders", "Uta Fritze", "Richard de Grijs"],
        ),
        (
            "0704.0191",
            "Peter Virnau (1), Leonid A. Mirny (1,2), Mehran Kardar (1) ((1) Massachusetts "
            "Institute of Technology, Department of Physics, Cambridge, MA, United States of "
            "America, (2) Massachusetts Institute of Technology, Harvard-MIT Division of Health "
            "Science and Technology, Cambridge, MA, United States of America)",
            ["Peter Virnau", "Leonid A. Mirny", "Mehran Kardar"],
        ),
        (
            "0801.3684",
            "Claire J. Chandler and Debra S. Shepherd (NRAO)",
            ["Claire J. Chandler", "Debra S. Shepherd"],
        ),
    ],
)
def test_affiliations_and_notes_never_become_authors(arxiv_id, byline, expected):
    assert _people(byline) == [(name, True) for name in expected], arxiv_id


@pytest.mark.parametrize(
    ("arxiv_id", "byline", "expected"),
    [
        (
            "0801.3877",
            "CDF Collaboration: T. Aaltonen, et al",
            [("CDF Collaboration", False), ("T. Aaltonen", True)],
        ),
        (
            "0801.4375",
            "CDF Collaboration: T. Aaltonen et al",
            [("CDF Collaboration", False), ("T. Aaltonen", True)],
        ),
        (
            "0801.4020",
            "PHENIX Collaboration, A. Adare, et al",
            [("PHENIX Collaboration", False), ("A. Adare", True)],
        ),
        (
            "0801.3801",
            "AURIGA Collaboration, Virgo Collaboration",
            [("AURIGA Collaboration", False), ("Virgo Collaboration", False)],
        ),
        (
            "0801.4656",
            "AMS Collaboration: Lu\\'isa Arruda",
            [("AMS Collaboration", False), ("Luísa Arruda", True)],
        ),
        ("0801.4589", "The KamLAND Collaboration", [("The KamLAND Collaboration", False)]),
        (
            # The byline issue 42 quotes: split at its "and", the first of two collaborations
            # named in the plural read as a person ("Keck Array").
            "issue 42",
            "Keck Array and BICEP2 Collaborations: P. Ade, Z. Ahmed",
            [
                ("Keck Array", False),
                ("BICEP2 Collaborations", False),
                ("P. Ade", True),
                ("Z. Ahmed", True),
            ],
        ),
        (
            "rule 7 leaves people",
            "A. Smith, B. Jones and the LIGO Scientific Collaboration",
            [("A. Smith", True), ("B. Jones", True), ("the LIGO Scientific Collaboration", False)],
        ),
    ],
)
def test_a_collaboration_named_as_an_author_stays_marked_not_a_person(arxiv_id, byline, expected):
    assert _people(byline) == expected, arxiv_id


def test_names_that_are_also_place_or_science_words_stay_people():
    # 0705.0057 and 1302.1411 in the bundled sample: R. N. Manchester and the mononym Ariando.
    assert _people(
        "B. M. Gaensler, L. Staveley-Smith, R. N. Manchester, M. J. Kesteven, L. Ball, "
        "A. K. Tzioumis"
    ) == [
        (n, True)
        for n in (
            "B. M. Gaensler",
            "L. Staveley-Smith",
            "R. N. Manchester",
            "M. J. Kesteven",
            "L. Ball",
            "A. K. Tzioumis",
        )
    ]
    assert [a.display for a in split_authors("T. Venkatesan, Ariando")] == [
        "T. Venkatesan",
        "Ariando",
    ]


def _s2_names(arxiv_id: str) -> list[str]:
    papers = json.loads(S2_PAPERS.read_text())
    return [a["name"] for a in papers[arxiv_id]["answer"]["authors"]]


def test_a_source_list_keeps_its_people_and_files_the_address_under_the_last_one():
    # Semantic Scholar's list for 0804.0849 goes on into the authors' addresses.
    names = _s2_names("0804.0849")
    assert names[3:11] == [
        "P. Observatory",
        "Socorro",
        "Nm",
        "U.S.A.",
        "J. B. C. F. Astrophysics",
        "A. Building",
        "U. Manchester",
        "UK.",
    ]
    cleaned = author_list_cleaned([parse_display_name(n) for n in names])
    assert [a.display for a in cleaned] == ["W. Goss", "A. Richards", "T. Muxlow"]
    assert cleaned[-1].affiliation.startswith("P. Observatory, Socorro, Nm, U.S.A.")


@pytest.mark.parametrize(
    "name",
    ["Astronomy", "UK.", "Usa", "U.S.A.", "A. Building", "J. B. C. F. Astrophysics", "Sweden."],
)
def test_entries_that_name_no_one_read_alone(name):
    assert not nonpersons.is_person(name)


def test_places_count_as_places_only_after_an_address():
    assert nonpersons.is_person("Manchester") and nonpersons.is_person("Nm")
    assert nonpersons.list_kinds(["A. Building", "Manchester", "Nm"]) == [
        nonpersons.AFFILIATION,
        nonpersons.PLACE,
        nonpersons.PLACE,
    ]


SAMPLE = ROOT / "papers" / "sample" / "arxiv-sample.jsonl.gz"
# Sample papers whose authors_parsed (arXiv's split, or the earlier split of an arXivRaw
# byline) holds notes and collaborations among the names.
WITH_NOTES = {"0704.0020", "0705.0382", "0705.0678", "0801.3877", "0801.4016", "0801.4029"}


@pytest.mark.django_db
def test_the_import_writes_no_note_as_an_authorship_and_marks_collaborations(tmp_path):
    import gzip

    from papers.ingest.importing import snapshot_import
    from papers.models import Authorship

    lines = [
        line
        for line in gzip.open(SAMPLE, "rt", encoding="utf-8")
        if json.loads(line)["id"] in WITH_NOTES
    ]
    assert len(lines) == len(WITH_NOTES)
    path = tmp_path / "notes.jsonl"
    path.write_text("".join(lines))
    snapshot_import(path, batch_size=4)
    rows = list(Authorship.objects.order_by("paper__arxiv_id", "position"))
    kinds = nonpersons.list_kinds([a.name for a in rows])
    assert {k for k in kinds} <= {nonpersons.PERSON, nonpersons.COLLABORATION}
    assert [a.name for a, k in zip(rows, kinds, strict=True) if k != nonpersons.PERSON] == [
        "The BABAR Collaboration",
        "the ALADIN Collaboration",
        "CDF Collaboration",
    ]
    assert all(a.is_person == (k == nonpersons.PERSON) for a, k in zip(rows, kinds, strict=True))
    assert not Authorship.objects.filter(name__icontains="et al").exists()
    assert not Authorship.objects.filter(name__istartswith="for the").exists()


def test_a_source_list_ends_in_its_address_dump_but_keeps_people_between_addresses():
    # 1203.2562: after three addresses in a row, "B. Hill" (Blackford Hill), "H. Mary",
    # "C. Lane" are pieces of addresses, not people (rule 6).
    names = _s2_names("1203.2562")
    cleaned = [
        a.display
        for a in author_list_cleaned([parse_display_name(n) for n in names], source_list=True)
    ]
    assert cleaned[:3] == ["H. Oliver", "J. Bock", "B. Altieri"]
    assert not {"B. Hill", "H. Mary", "C. Lane", "Edinburgh", "Madrid"} & set(cleaned)
    # 2401.08572: a company glued to a country between people ends no list.
    names = _s2_names("2401.08572")
    cleaned = [
        a.display
        for a in author_list_cleaned([parse_display_name(n) for n in names], source_list=True)
    ]
    assert cleaned == [
        "William Agnew",
        "A. S. Bergman",
        "Jennifer Chien",
        "Mark Díaz",
        "Seliem El-Sayed",
        "Shakir Mohamed",
        "Kevin R. McKee",
        "Jaylen Pittman",
    ]


def test_an_institute_for_a_science_is_no_note():
    # Semantic Scholar's list for 1203.2562 holds "Usa Institute for Astronomy" at 120 of 234:
    # read as "... for <note>", it cut the list there.
    names = _s2_names("1203.2562")
    assert names[119] == "Usa Institute for Astronomy"
    cleaned = author_list_cleaned([parse_display_name(n) for n in names])
    assert "Usa Institute for Astronomy" in cleaned[-1].affiliation or any(
        "Usa Institute for Astronomy" in a.affiliation for a in cleaned
    )
    assert [
        a.display for a in split_authors("Roberto Preghenella for the ALICE Collaboration")
    ] == ["Roberto Preghenella"]


def test_a_web_address_glued_to_a_name_is_not_part_of_it():
    # Semantic Scholar's record of 2302.02083 (the demo's recordings) names its one author
    # "Michal Kosinskihttps://www.semanticscholar.org/me/account".
    names = _s2_names("2302.02083")
    assert names == ["Michal Kosinskihttps://www.semanticscholar.org/me/account"]
    cleaned = author_list_cleaned([parse_display_name(n) for n in names], source_list=True)
    assert [a.display for a in cleaned] == ["Michal Kosinski"]
    assert [a.display for a in split_authors("A. Smith www.example.org, B. Jones")] == [
        "A. Smith",
        "B. Jones",
    ]
