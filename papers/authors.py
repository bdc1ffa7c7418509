"""Author names as arXiv writes them: TeX accents decoded, raw bylines split into people.

A byline is split at commas, semicolons, "&" and "and"; a parenthesised block ("(MIT)",
"(1)", "((1) MIT, (2) Caltech)") is the affiliation of the name before it. Then every piece
is classified by the rule set in `papers.nonpersons` (`author_list_cleaned`): notes ("et al",
"for the ATLAS Collaboration" to the byline's end) are dropped, affiliations and places written
after a comma ("J. Doe, Department of Astronomy, Manchester, UK") join the affiliation of the
name before them, and a collaboration named as an author stays, marked not a person.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from pylatexenc.latex2text import LatexNodes2Text

from . import nonpersons


class AuthorName(NamedTuple):
    """One person in a byline. A named tuple rather than a frozen dataclass: the import builds
    one for nearly every one of arXiv's ~12M authorships, and a tuple is built several times
    faster."""

    keyname: str
    forenames: str = ""
    suffix: str = ""
    affiliation: str = ""
    # False for a collaboration named as an author ("The ATLAS Collaboration").
    person: bool = True

    @property
    def display(self) -> str:
        return " ".join(filter(None, (self.forenames, self.keyname, self.suffix))).strip()


_latex = LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=True)
_TEX_HINT = re.compile(r"[\\{}~]")

# The TeX that names are written in, nearly always: accents over a letter (`\'a`, `\"{o}`,
# `\v{S}`, `\c c`, `\'\i`) and letters of their own (`{\l}`, `\ss`, `\AA`). These are decoded
# here, exactly as pylatexenc decodes them (tests/papers/test_authors.py compares the two over
# every TeX name in the corpus), at a hundredth of its cost; anything else goes to it.
_COMBINING = {
    "'": "\u0301",
    "`": "\u0300",
    '"': "\u0308",
    "^": "\u0302",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "v": "\u030c",
    "u": "\u0306",
    "H": "\u030b",
    "c": "\u0327",
    "k": "\u0328",
    "r": "\u030a",
    "d": "\u0323",
    "b": "\u0331",
}
_TEX_LETTERS = {
    "l": "ł",
    "L": "Ł",
    "o": "ø",
    "O": "Ø",
    "ss": "ß",
    "ae": "æ",
    "AE": "Æ",
    "oe": "œ",
    "OE": "Œ",
    "aa": "å",
    "AA": "Å",
    "i": "ı",
    "j": "ȷ",
}
_TEX_ACCENTS = (
    # symbol accents take a letter (after a space too, as TeX reads an argument: "M\\" obius"),
    # a braced letter, or a dotless i/j, braced or not
    r"""\\(?P<symbol>['`"^~=.])(?:\{(?P<s1>[A-Za-z])\}|\{\\(?P<s2>[ij])\}| ?(?P<s3>[A-Za-z])"""
    r"""|\\(?P<s4>[ij])(?![A-Za-z]))"""
    # lettered accents take a braced argument, or one letter after a space
    r"""|\\(?P<word>[vuHckrdb])(?:\{(?P<w1>[A-Za-z])\}|\{\\(?P<w2>[ij])\}| (?P<w3>[A-Za-z]))"""
)
_TEX_LETTER = r"""\\(?P<letter>ss|ae|AE|oe|OE|aa|AA|[lLoOij])(?![A-Za-z])"""
# In a name a letter command swallows the spaces after it, as TeX does ("S\\o ren"); running
# text keeps them: "125 \\AA and" was meant as "125 Å and" (`decode_text_accents`).
_TEX_COMMON = re.compile(_TEX_ACCENTS + "|" + _TEX_LETTER + " *")
_TEX_IN_TEXT = re.compile(_TEX_ACCENTS + "|" + _TEX_LETTER)
_TEX_UNCOMMON = re.compile(r"[\\$%#^_&]")


def _tex_common_char(match: re.Match) -> str:
    if match["letter"]:
        return _TEX_LETTERS[match["letter"]]
    accent = match["symbol"] or match["word"]
    base = next(g for g in match.group("s1", "s2", "s3", "s4", "w1", "w2", "w3") if g)
    return unicodedata.normalize("NFC", base + _COMBINING[accent])


def decode_text_accents(text: str) -> str:
    """Running text's accents and letters (as names' are decoded), the spaces after a letter
    command kept, everything else as written: for papers.ingest.textmode, which reads the
    rest of a title's or abstract's text-mode TeX."""
    return _TEX_IN_TEXT.sub(_tex_common_char, text)


def _decode_common_tex(text: str) -> str | None:
    """The decoded text, or None when it holds TeX beyond accents and letters."""
    decoded = _TEX_COMMON.sub(_tex_common_char, text)
    if _TEX_UNCOMMON.search(decoded):
        return None
    return decoded.replace("{", "").replace("}", "").replace("~", "\xa0")


@lru_cache(maxsize=65536)
def decode_tex(text: str) -> str:
    """Turn TeX accents and escapes (`Bal\\'azs`, `{\\"o}`) into Unicode; plain text passes."""
    if not text or not _TEX_HINT.search(text):
        return text
    decoded = _decode_common_tex(text)
    if decoded is None:
        try:
            decoded = _latex.latex_to_text(text)
        except Exception:  # pylatexenc raises on unbalanced input; keep the text as it is
            return text.replace("{", "").replace("}", "")
    return " ".join(decoded.split())


# arXiv bylines carry TeX written without the space TeX needs ("S\\lawianowski",
# "Lefran\\ccois", "Y\\ilmaz"): TeX, and pylatexenc, read "\\lawianowski" as one unknown macro
# and drop it, name and all. Split such a run into the accent or letter macro and the text.
_MACRO_RUN = re.compile(r"\\([A-Za-z]+)")
_GLUED_LETTERS = ("ss", "aa", "AA", "ae", "AE", "oe", "OE", "i", "j", "l", "L", "o", "O")
_GLUED_ACCENTS = ("v", "c", "u", "H", "k", "r", "d", "b", "t")
_WHOLE_MACROS = frozenset(
    _GLUED_LETTERS
    + _GLUED_ACCENTS
    + (
        "textrm",
        "textit",
        "textbf",
        "textsc",
        "emph",
        "mbox",
        "hbox",
        "rm",
        "it",
        "bf",
        "sc",
        "em",
        "tt",
        "sl",
        "mathrm",
        "relax",
        "dag",
        "ddag",
        "dagger",
        "ast",
        "star",
        "and",
        "quad",
    )
)


def _split_tex_run(match: re.Match) -> str:
    name = match.group(1)
    if name in _WHOLE_MACROS:
        return match.group(0)
    for prefix in _GLUED_LETTERS:
        if name.startswith(prefix):
            return f"\\{prefix}{{}}{name[len(prefix) :]}"
    if name[0] in _GLUED_ACCENTS and len(name) > 1:
        return f"\\{name[0]}{{{name[1]}}}{name[2:]}"
    return match.group(0)


def separate_tex_macros(text: str) -> str:
    """ "S\\lawianowski" -> "S\\l{}awianowski", so that decoding keeps the letters."""
    return _MACRO_RUN.sub(_split_tex_run, text) if "\\" in text else text


def decode_name(text: str) -> str:
    """A name (or a submitter, an affiliation) as arXiv writes it in TeX, in Unicode: its
    glued macros separated, then decoded. Both sources read names by this rule."""
    return decode_tex(separate_tex_macros(text))


_SUFFIXES = {"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"}
_SEPARATOR_AT_END = re.compile(r"(,\s*and\s|\sand\s|,|;|&)$", re.IGNORECASE)


def _close_piece(
    pieces: list[tuple[str, str]], name: str, affiliation: str, *, at_end: bool
) -> None:
    """Add the (name, affiliation) a separator (or the byline's end) closed to `pieces`: a
    suffix ("Jr.") joins the name before it, as does an affiliation that follows no name. A
    suffix closed by a separator keeps the previous name's affiliation only."""
    if name.lower() in _SUFFIXES and pieces:
        prev_name, prev_aff = pieces[-1]
        pieces[-1] = (f"{prev_name}, {name}", (prev_aff or affiliation) if at_end else prev_aff)
    elif name:
        pieces.append((name, affiliation))
    elif affiliation and pieces:
        prev_name, prev_aff = pieces[-1]
        pieces[-1] = (prev_name, prev_aff or affiliation)


def split_authors(raw: str, *, clean: bool = True) -> list[AuthorName]:
    """Split an arXivRaw byline ("A. One, B. Two (Univ X) and C. Three") into names.

    Affiliations in parentheses attach to the name they follow; "Jr." after a comma stays with
    the name before it. Names are TeX-decoded. With `clean` (the default) the pieces go through
    author_list_cleaned; without, they are what this function returned before that step
    existed (benchmarks/bylines.py measures the two side by side).
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
            _close_piece(pieces, chunk[: m.start()].strip(), affiliation, at_end=False)
            chunk = ""
            affiliation = ""
    _close_piece(pieces, chunk.strip(), affiliation, at_end=True)
    names = [parse_display_name(decode_tex(n), affiliation=decode_tex(a)) for n, a in pieces]
    return author_list_cleaned(names) if clean else names


# "R. Preghenella for the ALICE Collaboration": a note glued to the name, cut off.
_GLUED_NOTE = re.compile(r"[\s,;(]+(?:for|on\s+behalf\s+of|representing)\s.*$", re.IGNORECASE)
# "T. Aaltonen et al": the person stays, the note goes.
_GLUED_ET_AL = re.compile(r"[\s,]+et\.?\s*al\.?$", re.IGNORECASE)
# Footnote marks glued to a family name ("Smith1", "Smith1,2", "Smith*"): not part of it.
_FOOTNOTE_MARK = re.compile(r"(?<=[^\W\d_])(?:\d+(?:,\d+)*|\*+)$")
# An address glued into a name ("Michal Kosinskihttps://www.semanticscholar.org/me/account",
# Semantic Scholar's record of 2302.02083): no part of a name is a web address.
_GLUED_URL = re.compile(r"\s*\(?(?:https?://|www\.)\S*")


def _author_trimmed(author: AuthorName, display: str) -> tuple[AuthorName, bool]:
    """The entry without a note or footnote mark glued to it, and whether a note was cut."""
    last = display[-1:]
    # Nearly every name has nothing glued on: tell so without the regular expressions (the
    # import reads every authorship of arXiv through here).
    if not (
        last.isdigit()
        or last in "*.l"
        or "for " in display
        or "behalf" in display
        or "representing" in display
        or "://" in display
        or "www." in display
    ):
        return author, False
    cut = _GLUED_NOTE.search(display)
    # Only a note that names a group: "Institute for Astronomy" is no note.
    note = bool(
        cut
        and cut.start() > 0
        and nonpersons.entry_kind(display[cut.start() :].lstrip(" ,;(")) == nonpersons.NOTE
        and nonpersons.names_a_group(display[cut.start() :])
    )
    text = display[: cut.start()] if note and cut else display
    text = _GLUED_URL.sub("", text)
    text = _FOOTNOTE_MARK.sub("", _GLUED_ET_AL.sub("", text).strip()).strip()
    if text == display:
        return author, False
    return parse_display_name(text, affiliation=author.affiliation), note


def _split_team_prefix(author: AuthorName) -> list[AuthorName]:
    """ "CDF Collaboration: T. Aaltonen" is a collaboration and a person."""
    display = author.display
    head, colon, tail = display.partition(":")
    if colon and tail.strip() and nonpersons.entry_kind(head) == nonpersons.COLLABORATION:
        return [
            parse_display_name(head),
            parse_display_name(tail, affiliation=author.affiliation),
        ]
    return [author]


def author_list_cleaned(
    authors: list[AuthorName], *, source_list: bool = False
) -> list[AuthorName]:
    """The people (and collaborations) of a parsed author list, by `papers.nonpersons`' rules:
    notes dropped ("et al"; "for the X Collaboration" and everything after it), affiliations
    and places joined to the affiliation of the name before them, collaborations kept with
    `person=False`. `source_list` for a source's author list (Semantic Scholar's, OpenAlex's):
    rule 6 of papers.nonpersons. Pure; a list with nothing to change comes back equal."""
    return [author for _, author in author_list_sources(authors, source_list=source_list)]


def author_list_sources(
    authors: list[AuthorName], *, source_list: bool = False
) -> list[tuple[int, AuthorName]]:
    """author_list_cleaned, each entry with the index in `authors` it comes from (a name split
    in two gives two entries of one index): what the byline cleanup needs to keep rows."""
    entries: list[tuple[int, AuthorName]] = []
    displays: list[str] = []
    for index, author in enumerate(authors):
        trimmed, note_cut = _author_trimmed(author, author.display)
        parts = _split_team_prefix(trimmed) if ":" in trimmed.display else [trimmed]
        entries.extend((index, part) for part in parts)
        displays.extend(part.display for part in parts)
        if note_cut:
            break
    kinds = nonpersons.list_kinds(displays, source_list=source_list)
    kept: list[tuple[int, AuthorName]] = []
    for (index, author), display, kind in zip(entries, displays, kinds, strict=True):
        if kind == nonpersons.NOTE:
            if nonpersons.note_runs_to_end(display):
                break
            continue
        if kind in (nonpersons.AFFILIATION, nonpersons.PLACE):
            if kept:
                last_index, last = kept[-1]
                joined = ", ".join(filter(None, (last.affiliation, display)))
                kept[-1] = (last_index, last._replace(affiliation=joined))
            continue
        person = kind == nonpersons.PERSON
        kept.append((index, author if author.person == person else author._replace(person=person)))
    return kept


def parse_display_name(name: str, *, affiliation: str = "") -> AuthorName:
    """ "Anne-Christine Davis" → keyname Davis; "Smith, Jr." keeps the suffix apart; "Brown,
    Tom B." (a byline written family name first) → keyname Brown."""
    name = name.strip().strip(",").strip()
    suffix = ""
    if "," in name:
        head, _, tail = name.rpartition(",")
        if tail.strip().lower() in _SUFFIXES:
            name, suffix = head.strip(), tail.strip()
        elif head.strip() and tail.strip() and "," not in head:
            return AuthorName(keyname=head.strip(), forenames=tail.strip(), affiliation=affiliation)
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
