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
