"""The identifier rules written once (wovepaper.lib.identifiers)."""

from __future__ import annotations

import pytest

from wovepaper.lib.identifiers import (
    arxiv_id_month,
    arxiv_id_named,
    arxiv_id_parsed,
    arxiv_ids_mentioned,
    doi_normalized,
    dois_in,
    without_arxiv_ids,
)


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ("1301.3781", "1301.3781"),
        ("arXiv:1706.03762v5", "1706.03762"),
        ("oai:arXiv.org:hep-th/9901001", "hep-th/9901001"),
        ("math.GT/0309136v2", "math.GT/0309136"),
        ("1706.037", None),
        ("hep-th/990100", None),
        ("", None),
    ],
)
def test_arxiv_ids_are_read_by_one_rule(raw, parsed):
    assert arxiv_id_parsed(raw) == parsed


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("1706.03762", "1706.03762"),
        (" arXiv:1706.03762v5 ", "1706.03762"),
        ("ARXIV:1706.03762", "1706.03762"),
        ("https://arxiv.org/abs/1706.03762v2", "1706.03762"),
        ("arxiv.org/pdf/1706.03762.pdf", "1706.03762"),
        ("https://www.arxiv.org/html/2401.12345v1", "2401.12345"),
        ("https://arxiv.org/abs/hep-th/9901001v2", "hep-th/9901001"),
        ("math.GT/0309136", "math.GT/0309136"),
        ("https://doi.org/10.48550/arXiv.1706.03762", "1706.03762"),
        # No month 34, words beside the id, an address elsewhere, no id at all.
        ("1234.5678", None),
        ("1706.03762 attention", None),
        ("https://example.org/abs/1706.03762", None),
        ("attention is all you need", None),
        ("", None),
    ],
)
def test_a_query_names_an_arxiv_id_when_it_is_nothing_but_one(query, named):
    assert arxiv_id_named(query) == named


@pytest.mark.parametrize(
    ("text", "ids", "words"),
    [
        ("What does 2005.14165 find?", ["2005.14165"], "What does   find?"),
        (
            "Compare arXiv:1706.03762v5 with hep-th/9901001.",
            ["1706.03762", "hep-th/9901001"],
            "Compare   with  .",
        ),
        ("see https://arxiv.org/abs/1512.03385v1, twice: 1512.03385", ["1512.03385"], None),
        ("(1706.03762)", ["1706.03762"], "( )"),
        # Inside another token, or a number that names no month: none.
        ("doi 10.1103/PhysRevD.76.044016, path a/1706.03762", [], None),
        ("version 1234.5678 of it", [], "version 1234.5678 of it"),
    ],
)
def test_a_text_names_the_arxiv_ids_it_mentions_bare_or_prefixed(text, ids, words):
    assert arxiv_ids_mentioned(text) == ids
    if words is not None:
        assert without_arxiv_ids(text) == words


@pytest.mark.parametrize(
    ("arxiv_id", "month"),
    [
        ("1301.3781", (2013, 1)),
        ("0704.0001", (2007, 4)),
        ("2004.10934", (2020, 4)),
        ("hep-th/9901001", (1999, 1)),
        ("astro-ph/0703123", (2007, 3)),
        ("math.GT/0309136", (2003, 9)),
        ("1313.0001", None),
        ("not an id", None),
    ],
)
def test_an_arxiv_id_names_its_first_versions_month(arxiv_id, month):
    assert arxiv_id_month(arxiv_id) == month


def test_dois_are_split_and_normalised():
    assert dois_in("10.1086/520497 10.1088/0004-637X/704/2/1743") == [
        "10.1086/520497",
        "10.1088/0004-637X/704/2/1743",
    ]
    assert dois_in("https://doi.org/10.1/ABC; doi:10.1/abc") == ["10.1/ABC"]
    assert dois_in("") == [] and dois_in("see the journal") == []
    assert doi_normalized("https://dx.doi.org/10.1000/XYZ") == "10.1000/xyz"
