"""Author names as arXiv writes them: TeX accents decoded, raw bylines split into people."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text


@dataclass(frozen=True, slots=True)
class AuthorName:
    keyname: str
    forenames: str = ""
    suffix: str = ""
    affiliation: str = ""

    @property
    def display(self) -> str:
        parts = [self.forenames, self.keyname, self.suffix]
        return " ".join(p for p in parts if p).strip()


_latex = LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=True)
_TEX_HINT = re.compile(r"[\\{}~]")


@lru_cache(maxsize=65536)
def decode_tex(text: str) -> str:
    """Turn TeX accents and escapes (`Bal\\'azs`, `{\\"o}`) into Unicode; plain text passes."""
    if not text or not _TEX_HINT.search(text):
        return text
    try:
        decoded = _latex.latex_to_text(text)
    except Exception:  # pylatexenc raises on unbalanced input; keep the text readable as it is
        return text.replace("{", "").replace("}", "")
    return re.sub(r"\s+", " ", decoded).strip()


_SUFFIXES = {"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"}
_SEPARATOR_AT_END = re.compile(r"(,\s*and\s|\sand\s|,|;|&)$", re.IGNORECASE)


def split_authors(raw: str) -> list[AuthorName]:
    """Split an arXivRaw byline ("A. One, B. Two (Univ X) and C. Three") into names.

    Affiliations in parentheses attach to the name they follow; "Jr." after a comma stays with
    the name before it. Names are TeX-decoded.
    """
    text = re.sub(r"\s+", " ", raw or "").strip()
    if not text:
        return []
    pieces: list[tuple[str, str]] = []
    chunk = ""
    affiliation = ""
    depth = 0
    current_group = ""
    for ch in text:
        if ch == "(":
            depth += 1
            if depth == 1:
                current_group = ""
                continue
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                affiliation = (affiliation + "; " if affiliation else "") + current_group.strip()
                continue
        if depth:
            current_group += ch
            continue
        chunk += ch
        # A separator closes the chunk before it.
        m = _SEPARATOR_AT_END.search(chunk)
        if m:
            name = chunk[: m.start()].strip()
            if name.lower() in _SUFFIXES and pieces:
                prev_name, prev_aff = pieces[-1]
                pieces[-1] = (f"{prev_name}, {name}", prev_aff)
            elif name:
                pieces.append((name, affiliation))
            elif affiliation and pieces:
                prev_name, prev_aff = pieces[-1]
                pieces[-1] = (prev_name, prev_aff or affiliation)
            chunk = ""
            affiliation = ""
    tail = chunk.strip()
    if tail.lower() in _SUFFIXES and pieces:
        prev_name, prev_aff = pieces[-1]
        pieces[-1] = (f"{prev_name}, {tail}", prev_aff or affiliation)
    elif tail:
        pieces.append((tail, affiliation))
    elif affiliation and pieces:
        prev_name, prev_aff = pieces[-1]
        pieces[-1] = (prev_name, prev_aff or affiliation)
    return [parse_display_name(decode_tex(n), affiliation=decode_tex(a)) for n, a in pieces]


def parse_display_name(name: str, *, affiliation: str = "") -> AuthorName:
    """"Anne-Christine Davis" → keyname Davis; "Smith, Jr." keeps the suffix apart."""
    name = name.strip().strip(",").strip()
    suffix = ""
    if "," in name:
        head, _, tail = name.rpartition(",")
        if tail.strip().lower() in _SUFFIXES:
            name, suffix = head.strip(), tail.strip()
    parts = name.split()
    if not parts:
        return AuthorName(keyname="", affiliation=affiliation)
    if len(parts) == 1:
        return AuthorName(keyname=parts[0], suffix=suffix, affiliation=affiliation)
    # Lower-case particles ("van der", "de", "von") belong to the family name.
    idx = len(parts) - 1
    while idx > 1 and parts[idx - 1].islower():
        idx -= 1
    return AuthorName(
        keyname=" ".join(parts[idx:]),
        forenames=" ".join(parts[:idx]),
        suffix=suffix,
        affiliation=affiliation,
    )
