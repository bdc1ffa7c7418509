"""Fields of interest come from today's arXiv taxonomy, searchable by code and name."""

from __future__ import annotations

from accounts.categories import categories_search, category_codes, category_list


def test_current_categories_are_offered_and_retired_ones_are_not():
    codes = category_codes()
    assert {"cs.LG", "hep-th", "math.AG", "stat.ML"} <= codes
    assert "supr-con" not in codes and "cmp-lg" not in codes
    assert [c.code for c in category_list()] == sorted(codes)


def test_search_matches_names_and_codes_case_insensitively():
    found = {c.code for c in categories_search("machine learning")}
    assert {"cs.LG", "stat.ML"} <= found
    assert all("machine learning" in c.name.lower() for c in categories_search("machine learning"))
    assert [c.code for c in categories_search("HEP-TH")] == ["hep-th"]
    assert categories_search("no such field at all") == []
    assert next(c for c in category_list() if c.code == "cs.LG").label == "cs.LG: Machine Learning"
