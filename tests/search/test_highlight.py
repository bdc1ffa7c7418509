"""The words a search page marks (wovepaper.lib.search.highlight): the pattern a query compiles
to find candidate words writes its first letters as the ASCII characters it leaves out (a
class up to U+10FFFF took milliseconds to compile, on every query asked for the first time),
and finds exactly what the class written whole finds."""

from __future__ import annotations

import gzip
import json
import re
from itertools import islice

import pytest

from wovepaper.lib.search.highlight import QueryWords, _ascii_but


@pytest.fixture
def abstracts(sample_path) -> list[str]:
    with gzip.open(sample_path, "rt") as lines:
        return [json.loads(line)["abstract"].lower() for line in islice(lines, 800)]


@pytest.mark.parametrize(
    "query", ["magnetic fields", "spin chain", "Gödel numbering", "4d N=2 theories", "x"]
)
def test_the_candidates_are_those_of_the_class_written_whole(query, abstracts):
    words = QueryWords(query)
    firsts = "".join(sorted({s[0] for s in words.stems}))
    written_whole = re.compile(rf"(?=[{re.escape(firsts)}\x80-\U0010ffff]){words._word}")
    for text in abstracts:
        assert words._lowered_candidates.findall(text) == written_whole.findall(text)


def test_the_class_leaves_out_exactly_the_other_ascii_characters():
    pattern = re.compile(_ascii_but({"m", "s", "0"}))
    kept = [chr(code) for code in range(0x300) if pattern.fullmatch(chr(code))]
    assert kept[:3] == ["0", "m", "s"]
    assert kept[3:] == [chr(code) for code in range(0x80, 0x300)]
    assert re.compile(_ascii_but(set())).fullmatch("é") and not re.fullmatch(_ascii_but(set()), "a")
