"""The identifiers the archive's records carry, each rule written once: arXiv ids (both schemes,
in a record, a URL, a file or prose), arXiv category codes and DOIs. Ingest, the URL
converters, the API, forms, the sources' answers and the library import all read them here."""

from __future__ import annotations

import re

import idutils

# New-style 2401.01234 (four or five digits after the dot since 2015); old-style
# math.GT/0309136: a lower-case archive, an upper-case subject class, seven digits.
ARXIV_NEW_STYLE = r"\d{4}\.\d{4,5}"
ARXIV_OLD_STYLE = r"[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7}"
ARXIV_ID = rf"{ARXIV_NEW_STYLE}|{ARXIV_OLD_STYLE}"
_WHOLE_ARXIV_ID = re.compile(rf"^(?:{ARXIV_ID})$")
_VERSION_SUFFIX = re.compile(r"(?<=\d)v\d+$")
_ARXIV_PREFIXES = ("oai:arXiv.org:", "arXiv:", "arxiv:")

# An arXiv id where text mentions it: "arXiv:1706.03762", "arxiv.org/abs/hep-th/9901001v2",
# ".../pdf/1706.03762v5.pdf", arXiv's DOI "10.48550/arXiv.1706.03762".
ARXIV_MENTION = re.compile(
    rf"(?:arxiv\.org/(?:abs|pdf)/|arXiv[:.]\s*)({ARXIV_ID})(?:v\d+)?", re.IGNORECASE
)

# What readers write before an arXiv id: an arxiv.org abs, pdf or html address, "arXiv:", or
# arXiv's DOI (10.48550/arXiv.), bare or as a doi.org address.
_ARXIV_LEAD = (
    r"(?i:(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/"
    r"|(?:(?:https?://)?(?:dx\.)?(?:doi\.org/)?10\.48550/)?arxiv[:.]\s*)"
)
# A query that is nothing but an arXiv id, as readers paste one: "1706.03762", "arXiv:1706.03762v5",
# "hep-th/9901001", an address of its page or its PDF, its DOI.
_ARXIV_ID_QUERY = re.compile(rf"{_ARXIV_LEAD}?({ARXIV_ID})(?i:v\d+)?(?i:\.pdf)?/?")
# An arXiv id in prose, bare or led in: "what does 2005.14165 find", "compare arXiv:1706.03762
# with hep-th/9901001". Not inside another token (a DOI's digits, a path).
_ARXIV_ID_IN_PROSE = re.compile(rf"(?:{_ARXIV_LEAD}|(?<![\w./-]))({ARXIV_ID})(?i:v\d+)?(?![\w/])")

# arXiv registers a DOI for every paper since 2022 (10.48550/arXiv.<id>); OpenAlex and S2 often
# give only that DOI for a preprint, so it is read as the arXiv id it names.
ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(?P<id>.+)$", re.IGNORECASE)
ARXIV_DOI_PREFIX = "10.48550/arxiv."  # as doi_normalized writes it

# An arXiv category code: cs.LG, hep-th, math.GT, astro-ph.CO, cond-mat.stat-mech.
CATEGORY_CODE = r"[a-z][a-z\-]*(?:\.[A-Za-z\-]+)?"
CATEGORY_CODE_WHOLE = re.compile(rf"^{CATEGORY_CODE}$")

# A DOI as it appears in free text or a reference manager's field.
DOI_IN_TEXT = re.compile(r"10\.\d{4,9}/\S+", re.IGNORECASE)


def arxiv_id_parsed(raw: str | None) -> str | None:
    """The bare arXiv id in `raw` (an "arXiv:" or OAI prefix and a version suffix dropped), or
    None when `raw` is no arXiv id."""
    value = (raw or "").strip()
    for prefix in _ARXIV_PREFIXES:
        if value.startswith(prefix):
            value = value[len(prefix) :]
    value = _VERSION_SUFFIX.sub("", value)
    return value if _WHOLE_ARXIV_ID.match(value) else None


def arxiv_id_named(query: str | None) -> str | None:
    """The arXiv id a search query is nothing but (`_ARXIV_ID_QUERY`), or None: a number
    that names no month ("1234.5678") is no id."""
    match = _ARXIV_ID_QUERY.fullmatch((query or "").strip())
    if match is None or arxiv_id_month(match[1]) is None:
        return None
    return match[1]


def arxiv_ids_mentioned(text: str | None) -> list[str]:
    """The arXiv ids a text names (`_ARXIV_ID_IN_PROSE`), in order, each once; a number that
    names no month is none."""
    found = (match[1] for match in _ARXIV_ID_IN_PROSE.finditer(text or ""))
    return [i for i in dict.fromkeys(found) if arxiv_id_month(i) is not None]


def without_arxiv_ids(text: str | None) -> str:
    """The text with the arXiv ids it names taken out (their "arXiv:" or address too), for
    reading its words."""
    return _ARXIV_ID_IN_PROSE.sub(
        lambda match: " " if arxiv_id_month(match[1]) is not None else match[0], text or ""
    )


def arxiv_id_month(arxiv_id: str) -> tuple[int, int] | None:
    """The (year, month) an arXiv identifier names, its first version's: `1301.3781` → (2013, 1),
    `hep-th/9901001` → (1999, 1); None for anything else. New-style ids began in April 2007,
    old-style ones ran from 1991 to March 2007."""
    value = arxiv_id_parsed(arxiv_id)
    if value is None:
        return None
    digits = value.rpartition("/")[2] if "/" in value else value
    year, month = int(digits[:2]), int(digits[2:4])
    if not 1 <= month <= 12:
        return None
    if "/" in value:
        return (1900 + year if year >= 91 else 2000 + year), month
    return 2000 + year, month


def dois_in(raw: str | None) -> list[str]:
    """The DOIs a field holds, in order, each once: arXiv's `doi` may hold several ("10.1086/520497
    10.1088/0004-637X/704/2/1743", the paper and its erratum), and sources write them as URLs."""
    found: list[str] = []
    for part in re.split(r"[\s,;]+", raw or ""):
        doi = doi_normalized(part)
        if part and idutils.is_doi(doi) and doi not in {d.lower() for d in found}:
            found.append(idutils.normalize_doi(part))
    return found


def doi_normalized(raw: str | None) -> str:
    """A bare, lower-case DOI ("" for none): DOIs are case-insensitive, and sources write them
    as https://doi.org/ URLs or with a "doi:" prefix (idutils strips either)."""
    value = (raw or "").strip()
    return (idutils.normalize_doi(value) if idutils.is_doi(value) else value).lower()
