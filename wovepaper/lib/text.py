"""Text folded for comparison and search: what two spellings of one name have in common."""

from __future__ import annotations

import unicodedata

from text_unidecode import unidecode


def fold(text: str) -> str:
    """Lower-case ASCII transliteration: accents dropped, ø→o, ß→ss, ł→l, Cyrillic romanised."""
    text = unicodedata.normalize("NFKC", text or "")
    return unidecode(text).lower()


def folded_words(text: str) -> str:
    """`fold`, with runs of whitespace made one space: the form stored for substring search."""
    return " ".join(fold(text).split())


def written_in_latin(name: str) -> bool:
    """True when the name has a Latin letter ("Édouard Grave"), False for "拓也 大嶋"."""
    return any(ch.isalpha() and "LATIN" in unicodedata.name(ch, "") for ch in name)
