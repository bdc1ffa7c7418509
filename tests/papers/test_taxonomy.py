from __future__ import annotations

import pytest

from papers.taxonomy import CATEGORIES, POPULAR, archive_name, category_name


@pytest.mark.parametrize(
    "code,name",
    [
        ("cs.LG", "Machine Learning"),
        ("stat.ML", "Machine Learning"),
        ("math.GT", "Geometric Topology"),
        ("cond-mat.str-el", "Strongly Correlated Electrons"),
        ("physics.optics", "Optics"),
        ("hep-th", "High Energy Physics - Theory"),
        ("q-fin.TR", "Trading and Market Microstructure"),
        ("eess.IV", "Image and Video Processing"),
        ("econ.EM", "Econometrics"),
        ("alg-geom", "Algebraic Geometry"),  # retired archive, still on 1990s papers
    ],
)
def test_category_names(code, name):
    assert category_name(code) == name


def test_unknown_subcategory_falls_back_to_its_archive_and_unknown_codes_to_themselves():
    assert category_name("cs.XX") == "Computer Science"
    assert category_name("bogus") == "bogus"
    assert archive_name("astro-ph.GA") == "Astrophysics"


def test_taxonomy_covers_every_archive_of_the_current_arxiv():
    prefixes = {code.split(".")[0] for code in CATEGORIES}
    for archive in (
        "astro-ph",
        "cond-mat",
        "cs",
        "econ",
        "eess",
        "gr-qc",
        "hep-ex",
        "hep-lat",
        "hep-ph",
        "hep-th",
        "math",
        "math-ph",
        "nlin",
        "nucl-ex",
        "nucl-th",
        "physics",
        "q-bio",
        "q-fin",
        "quant-ph",
        "stat",
    ):
        assert archive in prefixes
    assert sum(code.startswith("cs.") for code in CATEGORIES) == 40
    assert sum(code.startswith("math.") for code in CATEGORIES) == 32
    assert set(POPULAR) <= set(CATEGORIES)
