"""Which words of a text a query's words match, for highlighting them in a snippet and for
telling whether a document contains every word of a query.

Words are compared as the tantivy engine compares them (its analyzer: lower case, accents
folded, English stop words dropped, Snowball English stems), whatever engine is configured:
PostgreSQL's 'english' configuration stems with Snowball too, SQLite FTS5 with Porter's
original, so a rare word may stem differently there. tantivy's own snippets
(`SnippetGenerator`) are not used: they exist for the tantivy engine only, and a page shows
its snippets whatever the engine.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from functools import lru_cache

import tantivy

from .base import TOKEN, parse_text
from .tantivy import text_analyzer

_local = threading.local()


def _analyzer() -> tantivy.TextAnalyzer:
    # One per thread: an analyzer keeps state while it tokenizes.
    analyzer = getattr(_local, "analyzer", None)
    if analyzer is None:
        analyzer = _local.analyzer = text_analyzer()
    return analyzer


@lru_cache(maxsize=65_536)
def stem(token: str) -> str:
    """The token's stem as the engines index it; "" for a stop word."""
    found = _analyzer().analyze(token)
    return found[0] if found else ""


def _ascii_but(letters: set[str]) -> str:
    """A character class of every character but the ASCII ones not in `letters`."""
    ranges: list[str] = []
    start = None
    for code in range(0x81):
        left_out = code < 0x80 and chr(code) not in letters
        if left_out and start is None:
            start = code
        elif not left_out and start is not None:
            ranges.append(f"\\x{start:02x}" + (f"-\\x{code - 1:02x}" if code - 1 > start else ""))
            start = None
    return f"[^{''.join(ranges)}]"


class QueryWords:
    """A query's words (from every clause, phrases included) as stems."""

    def __init__(self, text: str) -> None:
        tokens = (t for clause in parse_text(text) for w in clause.words for t in TOKEN.findall(w))
        self.stems = frozenset(s for s in map(stem, tokens) if s)
        # Only tokens that start as a stem does are stemmed (a stem keeps its word's first two
        # letters), found by one regex pass over the lowered text; stems of accented words are
        # folded to ASCII, so a token that starts with another letter is a candidate too. The
        # lookahead's set of first letters lets the scan skip to them (twice as fast as testing
        # every position, case-insensitively, on the text as written).
        starts = sorted({s[:2] for s in self.stems})
        self._word = (
            r"(?<![^\W_])(?:(?:" + "|".join(map(re.escape, starts)) + r")|[^\x00-\x7f])[^\W_]*"
            if starts
            else r"(?!)"
        )
        # A query asked for the first time compiles its pattern: the set of first letters is
        # written as the ASCII it leaves out (a class up to U+10FFFF took 2.5-6.6 ms to
        # compile, this one 0.1 ms, for the same matches).
        firsts = {s[0] for s in self.stems}
        self._lowered_candidates = re.compile(f"(?={_ascii_but(firsts)}){self._word}")
        self._candidates: re.Pattern[str] | None = None

    def __bool__(self) -> bool:
        return bool(self.stems)

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Where the text's tokens that match a query word start and end."""
        lowered = text.lower()
        # Lowering keeps each character's place but for a few (a dotted capital I becomes
        # two): those texts are read as written.
        if len(lowered) == len(text):
            found_in = self._lowered_candidates.finditer(lowered)
        else:
            if self._candidates is None:  # compiled when a text first needs it: few do
                self._candidates = re.compile(self._word, re.IGNORECASE)
            found_in = self._candidates.finditer(text)
        for found in found_in:
            start, end = found.span()
            if stem(text[start:end]) in self.stems:
                yield start, end

    def all_in(self, text: str) -> bool:
        """Whether the text holds every word of the query (as stems, phrases as words)."""
        return bool(self.stems) and self.stems <= {stem(t) for t in TOKEN.findall(text)}
