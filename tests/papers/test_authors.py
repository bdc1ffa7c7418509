"""TeX in author names: the quick decoder for accents must agree with pylatexenc everywhere."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from lxml import etree

from papers.authors import _decode_common_tex, _latex, decode_tex

FIXTURES = Path(__file__).parent.parent / "fixtures"
HANDWRITTEN = [
    r"Bal\'azs",
    r"G\"{o}del",
    r"\v{S}ik",
    r"{\l}ukasz",
    r"\l ukasz",
    r"\l{}ukasz",
    r"{\'\i}",
    r"\'{\i}",
    r"\'\i",
    r"\c{c}",
    r"\c c",
    r"Fran\c cois",
    r"\~n",
    r"Stra\ss e",
    r"S{\o}ren",
    r"\AA ngstr\"om",
    r"Erd\H{o}s",
    r"\k{a}",
    r"\.Zelazny",
    r"Do\u{g}an",
    r"\=a",
    r"Ch\^ole",
    r"\`a",
    r"A~B",
    r"{Smith}",
    r"M\"uller",
    r"{\"U}lk\"er",
    r"Ha\"{\i}k",
    r"\'Eric",
    r"\v{c}",
    r"C\ae sar",
    r"\oe uvre",
    r"\L\'od\'z",
    r"Kj\O lner",
    r"\r{a}",
    r"\d{a}",
    r"\b{a}",
    r"\`{\i}",
    r"\^{\i}",
    r"\~{\i}",
    r"\"\i",
    r"\v{\i}",
    r"\ij",
    r"\' a",  # an accent's argument after a space, as TeX reads it
    r"K\" ahler",
]
# What the quick decoder must hand to pylatexenc rather than guess at.
UNCOMMON = [
    r"\'{ab}",
    r"\'{}",
    r"A\&B",
    r"\textit{x}",
    r"$\alpha$",
    r"\'{\'e}",
    r"\cc",
    r"\v{}",
    r"\^{}",
    r"50\%",
]


def _pylatexenc(text: str) -> str:
    return " ".join(_latex.latex_to_text(text).split())


def corpus_tex_names() -> list[str]:
    """Every author string with TeX in the bundled sample and the recorded corpus."""
    names: set[str] = set()
    sample = Path(__file__).parent.parent.parent / "papers" / "sample" / "arxiv-sample.jsonl.gz"
    lines = list(gzip.open(sample, "rt", encoding="utf-8"))
    lines += (FIXTURES / "arxiv-snapshot" / "first200.jsonl").read_text().splitlines()
    for line in lines:
        data = json.loads(line)
        names.update(re.split(r",| and ", data["authors"]))
        for entry in data.get("authors_parsed") or []:
            names.update(part for part in entry[:3] if part)
    for page in (FIXTURES / "arxiv-oai").glob("*arXivRaw*.xml"):
        for element in etree.parse(str(page)).iter("{*}authors"):
            names.update(re.split(r",| and ", element.text or ""))
    return sorted(n.strip() for n in names if re.search(r"[\\{}~]", n))


def test_quick_decoder_agrees_with_pylatexenc_on_every_corpus_name():
    names = corpus_tex_names() + HANDWRITTEN
    assert len(names) > 150
    decoded_quickly = 0
    for name in names:
        quick = _decode_common_tex(name)
        if quick is None:
            continue
        decoded_quickly += 1
        assert " ".join(quick.split()) == _pylatexenc(name), name
    # The point is speed: most real names must take the quick path. The rest are mostly arXiv's
    # own damaged forms (`Garc\\ia`, `Lefran\\ccois`), which only pylatexenc reads as it does.
    assert decoded_quickly / len(names) > 0.85


@pytest.mark.parametrize("text", UNCOMMON)
def test_quick_decoder_leaves_other_tex_to_pylatexenc(text):
    assert _decode_common_tex(text) is None
    assert decode_tex(text) == _pylatexenc(text)


def test_decode_tex_passes_plain_text_and_tolerates_broken_tex():
    assert decode_tex("Ada Lovelace") == "Ada Lovelace"
    assert decode_tex(r"G\"odel~Kurt") == "Gödel Kurt"
    assert decode_tex("{\\'E}mile {unbalanced") == "Émile unbalanced"


def test_a_name_written_family_name_first_keeps_its_family_name():
    """OpenAlex prints some bylines "Family, Given" (2005.14165's "Brown, Tom B."): the family
    name is the part before the comma, not the last initial; "Smith, Jr." is still a suffix."""
    from papers.authors import parse_display_name

    brown = parse_display_name("Brown, Tom B.")
    assert (brown.keyname, brown.forenames, brown.display) == ("Brown", "Tom B.", "Tom B. Brown")
    assert parse_display_name("Smith, Jr.").suffix == "Jr."
    assert parse_display_name("Anne-Christine Davis").keyname == "Davis"
