"""The identifier rules written once (wovepaper.lib.identifiers)."""

from __future__ import annotations

import pytest

from wovepaper.lib.identifiers import arxiv_id_month, arxiv_id_parsed, doi_normalized, dois_in


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
