"""The B3 figures of benchmarks/identities.py, checked on a case worked out by hand."""

from __future__ import annotations

import pytest

from benchmarks.identities import _half, b3, summary


def test_b3_scores_a_split_and_a_wrong_merge_as_worked_out_by_hand():
    # People: {a, b}, {c}, {d}. Records: a alone (a split), b with c (a wrong merge), d alone.
    record = {"a": 1, "b": 2, "c": 2, "d": 3}
    person = {"a": "P", "b": "P", "c": "Q", "d": "R"}
    scores = b3(list(record), record, person)
    assert scores == {"a": [1.0, 0.5], "b": [0.5, 0.5], "c": [0.5, 1.0], "d": [1.0, 1.0]}
    figures = summary(scores, list(record))
    assert figures["precision"] == pytest.approx(0.75)
    assert figures["recall"] == pytest.approx(0.75)
    assert figures["f1"] == pytest.approx(0.75)
    # One record per person: 1.0 both ways.
    perfect = b3(list(record), {"a": 1, "b": 1, "c": 2, "d": 3}, person)
    assert summary(perfect, list(record))["precision"] == 1.0
    assert summary(perfect, list(record))["recall"] == 1.0
    assert summary(scores, [])["precision"] is None


def test_the_halves_are_fixed_by_the_seed_and_the_person():
    people = [f"s2:{n}" for n in range(200)]
    halves = [_half(42, p) for p in people]
    assert halves == [_half(42, p) for p in people]
    assert 60 < halves.count("tune") < 140
    assert halves != [_half(7, p) for p in people]
