"""Formulas converted once for every web process (papers.conversions): a list rendered by a
process that has converted nothing reads the conversions another made from the shared cache,
converts none of them itself, and shows exactly what converting them shows; with the shared
cache off, or for a code change (the key names the converting code), it converts them."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from papers import conversions, mathtext
from papers.selectors import papers_with_short_bylines
from papers.templatetags.paper_tags import paper_items

TITLE = r"Bounds on $\Lambda_b^0 \to p K^-$ decays in AdS_3"
ABSTRACT = r"We find $x^2 < 1$ and $$\int_0^1 f(x)\,dx$$ for T_c, with \GL_n(\D) upright."


@pytest.fixture(autouse=True)
def _new_process(settings):
    settings.PAGE_CACHE_SECONDS = 0
    settings.LIST_ITEM_CACHE_SECONDS = 0
    settings.MATHML_CACHE_SECONDS = 3600
    cache.clear()
    conversions.forget_local()
    yield
    conversions.forget_local()


@pytest.fixture
def converted(monkeypatch):
    """The formulas converted by latex2mathml in this process (not read from a cache)."""
    seen: list[str] = []
    convert = mathtext._mathml

    def counted(tex: str, display: bool) -> str | None:
        seen.append(tex)
        return convert(tex, display)

    monkeypatch.setattr(mathtext, "_mathml", counted)
    return seen


def rendered(papers, highlight: str = "") -> str:
    """The papers' list items, as a list page renders them."""
    return str(paper_items({"highlight": highlight}, papers_with_short_bylines(papers)))


@pytest.fixture
def listed(paper_factory):
    return [paper_factory(title=TITLE, abstract=ABSTRACT), paper_factory(title="Plain words")]


def test_another_process_reads_the_conversions_instead_of_making_them(listed, converted):
    first = rendered(listed)
    assert len(converted) >= 5  # the title's formula and script, the abstract's three and more
    assert first.count("<math") >= 6
    conversions.forget_local()  # what a second web process starts with
    converted.clear()
    assert rendered(listed) == first
    assert converted == []


def test_a_search_passage_reads_them_too(listed, converted):
    first = rendered(listed, highlight="decays find")
    conversions.forget_local()
    converted.clear()
    assert rendered(listed, highlight="decays find") == first
    assert "<mark>" in first
    assert converted == []


def test_a_process_that_holds_them_asks_the_cache_nothing(listed, converted, monkeypatch):
    first = rendered(listed)
    asked: list[list[str]] = []
    get_many = cache.get_many
    monkeypatch.setattr(cache, "get_many", lambda keys: asked.append(list(keys)) or get_many(keys))
    assert rendered(listed) == first
    assert asked == []


def test_with_the_shared_cache_off_each_process_converts(settings, listed, converted):
    settings.MATHML_CACHE_SECONDS = 0
    first = rendered(listed)
    made = len(converted)
    assert made >= 5
    conversions.forget_local()
    assert rendered(listed) == first
    assert len(converted) == 2 * made


def test_a_formula_that_does_not_convert_is_kept_as_not_converting(paper_factory, converted):
    broken = paper_factory(title=r"A formula that never closes $\frac{1}{$ here", abstract="")
    first = rendered([broken])
    assert '<span class="tex">' in first
    conversions.forget_local()
    converted.clear()
    assert rendered([broken]) == first
    assert converted == []


def test_the_key_names_the_converting_code(monkeypatch):
    key = ("formula", "x^2", False)
    before = conversions._shared_key(key)
    assert conversions.converter_version() in before
    monkeypatch.setattr(conversions, "converter_version", lambda: "another-release")
    assert conversions._shared_key(key) != before


def test_every_conversion_a_text_needs_is_found_without_converting(converted):
    keys = mathtext.conversions_of(TITLE + " " + ABSTRACT)
    assert converted == []
    kinds = [kind for kind, _, _ in keys]
    assert kinds.count("readable") == 3
    assert kinds.count("script") == 2  # AdS_3 and T_c
    assert ("readable", "x^2 < 1", False) in keys
    assert any(display for _, _, display in keys)  # the $$…$$ formula


def test_formulas_a_page_does_not_show_are_asked_for_once(paper_factory, monkeypatch):
    # A list shows an abstract's opening words: the formula after them is converted by no one.
    words = " ".join(f"word{n}" for n in range(80))
    long = paper_factory(title="Plain", abstract=f"{words} and then $y^3 > 2$ at the end.")
    asked: list[list[str]] = []
    get_many = cache.get_many
    monkeypatch.setattr(cache, "get_many", lambda keys: asked.append(list(keys)) or get_many(keys))
    first = rendered([long])
    assert len(asked) == 1 and "<math" not in first
    assert rendered([long]) == first
    assert len(asked) == 1
