"""Person names as bylines write them, reduced to something two spellings can be compared on.

arXiv bylines, Semantic Scholar and OpenAlex spell one person in many ways: "Édouard Grave",
"Edouard Grave", "Grave, Edouard", "E. Grave", "É. Grave"; "Marie-Anne Lachaux" and
"M.-A. Lachaux"; "Ludwig van Beethoven" and "L. van Beethoven"; "Wang Wei" and "Wei Wang".
Everything here is pure and cheap, because alignment compares every byline name with the
source's names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from nicknames import NickNamer
from rapidfuzz.distance import JaroWinkler

from papers.nonpersons import COLLECTIVE, PERSON, entry_kind
from wovepaper.lib.text import fold

# Lower-case words that belong to the family name ("van der Berg", "de la Cruz", "bin Salman").
PARTICLES = frozenset(
    {
        "van",
        "von",
        "der",
        "den",
        "de",
        "del",
        "della",
        "delle",
        "dei",
        "degli",
        "di",
        "da",
        "das",
        "dos",
        "du",
        "la",
        "le",
        "les",
        "lo",
        "ten",
        "ter",
        "te",
        "zu",
        "zur",
        "af",
        "av",
        "bin",
        "ibn",
        "al",
        "el",
        "st",
        "mac",
        "y",
        "e",
    }
)
SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
_TOKEN = re.compile(r"[a-z0-9]+")
# Words that make a byline entry an institution, not a person ("Institute for Astronomy").
_INSTITUTIONAL = frozenset(
    {
        "institute",
        "institut",
        "instituto",
        "university",
        "universite",
        "universitat",
        "center",
        "centre",
        "laboratory",
        "laboratories",
        "department",
        "observatory",
    }
)
# The group words are papers.nonpersons' own, so that a byline entry is read as a team by
# the same rule everywhere.
_NOT_PEOPLE = COLLECTIVE | _INSTITUTIONAL
# Byline entries that stand for unnamed people: "et al", "et al.", "and others", "others".
_NOBODY = frozenset({("et", "al"), ("and", "others"), ("others",), ("al", "et"), ("etal",)})
# "John Smith for the ATLAS Collaboration", "J. Smith on behalf of the LHCb Collaboration".
_ON_BEHALF = re.compile(r"[\s(,;]+(?:for|on\s+behalf\s+of)\b", re.IGNORECASE)
# "T. Aaltonen et al" (arXiv bylines that name only the first author of many).
_ET_AL = re.compile(r"[\s,]+et\.?\s*al\.?$", re.IGNORECASE)
# A given-name word: its letter runs, each maybe followed by a period ("Zh.", "Yu.A.", "M.-A.").
_ABBREVIATED = re.compile(r"([a-z0-9]+)(\.?)")

# How a name pair agreed, from the surest to the least sure; the alignment adds two of its own
# (a pair out of byline order, a slot whose family name agrees while the given names do not).
# (papers.models.Authorship.MatchMethod stores them.)
EXACT = "exact"
INITIALS = "initials"
NICKNAME = "nickname"
REORDERED = "reordered"
NEAR_GIVEN = "near_given"
FAMILY_VARIANT = "family_variant"
MONONYM = "single_name"


@lru_cache(maxsize=1)
def _nicknamer() -> NickNamer:
    # The `nicknames` package's hand-curated table of English given names (Bill/William,
    # Bob/Robert, Kate/Katherine), loaded once per process.
    return NickNamer()


@lru_cache(maxsize=50_000)
def _nickname_of(a: str, b: str) -> bool:
    """True when one given name is a listed nickname of the other (either direction)."""
    table = _nicknamer()
    return b in table.nicknames_of(a) or a in table.nicknames_of(b)


@lru_cache(maxsize=200_000)
def _family_key(family: tuple[str, ...]) -> str:
    return "".join(t for t in family if t not in PARTICLES) or "".join(family)


@dataclass(frozen=True, slots=True)
class ParsedName:
    """A name split into given-name tokens and family-name tokens, all folded to ASCII."""

    given: tuple[str, ...]
    family: tuple[str, ...]
    # True when the name was written "Family, Given", so its order is known, not guessed.
    ordered: bool = False
    # For each given token, True when it was written abbreviated: one letter, or letters ending
    # with a period whatever their number ("Zh.", "Kh.", "Yu.", "Chr.").
    abbreviated: tuple[bool, ...] = ()

    def is_initial(self, index: int) -> bool:
        token = self.given[index]
        return len(token) == 1 or (index < len(self.abbreviated) and self.abbreviated[index])

    @property
    def family_key(self) -> str:
        return _family_key(self.family)

    @property
    def initials(self) -> str:
        return "".join(t[0] for t in self.given if t)

    @property
    def has_full_given(self) -> bool:
        return any(not self.is_initial(i) for i in range(len(self.given)))


def _tokens(text: str) -> list[str]:
    # Hyphens and dots separate tokens: "Marie-Anne" → marie anne, "M.-A." → m a, "J.R.R." → j r r.
    return _TOKEN.findall(fold(text))


def _given_tokens(
    text: str, *, capitals_are_initials: bool = False
) -> tuple[tuple[str, ...], tuple[bool, ...]]:
    """Given-name tokens with, for each, whether it was abbreviated with a period.

    With `capitals_are_initials`, a word of two or three capitals ("GM" in "GM Leung", as
    OpenAlex and Scopus write initials) is that many initials.
    """
    if capitals_are_initials and text.isalpha() and text.isupper() and 2 <= len(text) <= 3:
        letters = tuple(fold(text))
        return letters, (True,) * len(letters)
    found = _ABBREVIATED.findall(fold(text))
    return tuple(t for t, _ in found), tuple(bool(dot) for _, dot in found)


@lru_cache(maxsize=200_000)
def parse_name(name: str) -> ParsedName:
    """Split a display name into given and family names.

    "Family, Given" (the form OpenAlex's raw names and arXiv's oai_dc use) is recognised by its
    comma, unless what follows the comma is a suffix ("Smith, Jr."). Otherwise the family name
    is the last word together with any lower-case particles before it ("Ludwig van Beethoven").
    """
    text = (name or "").strip()
    if "," in text:
        head, _, tail = text.partition(",")
        tail_tokens = _tokens(tail)
        if tail_tokens and not all(t in SUFFIXES for t in tail_tokens):
            # "Belfort, Jr., Rubens" and "Smith, John, Jr." both occur: suffixes go anywhere.
            family = [t for t in _tokens(head) if t not in SUFFIXES]
            given = [g for g in zip(*_given_tokens(tail), strict=True) if g[0] not in SUFFIXES]
            return _parsed(given, family, ordered=True)
        text = head
    words = [(w, _tokens(w)) for w in text.split()]
    words = [(w, t) for w, t in words if t]
    # Drop a trailing suffix word ("John Smith Jr.").
    while len(words) > 1 and all(t in SUFFIXES for t in words[-1][1]):
        words.pop()
    if not words:
        return ParsedName((), ())
    tokens_per_word = [t for _, t in words]
    if len(words) == 1:
        return ParsedName((), tuple(tokens_per_word[0]))
    idx = len(words) - 1
    # Only lower-case particles join the family name: "Van" may be a given name ("Van Nguyen").
    while idx > 1 and words[idx - 1][0].islower() and words[idx - 1][1][0] in PARTICLES:
        idx -= 1
    # Initials run together in capitals, unless the whole name is in capitals ("BO YANG").
    capitals = not text.isupper()
    given = [
        g
        for w, _ in words[:idx]
        for g in zip(*_given_tokens(w, capitals_are_initials=capitals), strict=True)
    ]
    # Some records put the suffix first ("Jr. Rubens Belfort"): it is not a given name.
    given = [g for g in given if g[0] not in SUFFIXES] or given
    family = [t for w in tokens_per_word[idx:] for t in w]
    return _parsed(given, family)


def _parsed(
    given: list[tuple[str, bool]], family: list[str], *, ordered: bool = False
) -> ParsedName:
    return ParsedName(
        tuple(t for t, _ in given),
        tuple(family),
        ordered=ordered,
        abbreviated=tuple(dot for _, dot in given),
    )


@lru_cache(maxsize=200_000)
def person_part(name: str) -> str:
    """The person a byline entry names, without a team or collaboration glued to it; "" when the
    entry names no one ("et al", "and others", "The ATLAS Collaboration", "Institute for
    Astronomy").

    Sources glue such words on in two ways: after the name ("J. Smith for the ATLAS
    Collaboration", "on behalf of ...") and before it ("Gemini Team Rohan Anil", "LHCb
    Collaboration: R. Aaij"). An entry that `papers.nonpersons` reads as an affiliation, a place
    or a note ("A. Building", "UK.", "Usa Google Research") names no one either.
    """
    found = _person_part(name)
    return found if found and entry_kind(found) == PERSON else ""


def _person_part(name: str) -> str:
    text = _ET_AL.sub("", " ".join((name or "").split()))
    match = _ON_BEHALF.search(text)
    if match and match.start() > 0 and _NOT_PEOPLE & set(_tokens(text[match.end() :])):
        text = text[: match.start()].strip(" ,;(")
    tokens = _tokens(text)
    if not tokens or tuple(tokens) in _NOBODY or tokens[-2:] == ["et", "al"]:
        return ""
    if not _NOT_PEOPLE & set(tokens):
        return text
    if "," in text or _INSTITUTIONAL & set(tokens):
        return ""
    # A team glued in front: the person, if any, follows the last collective word (after a
    # colon if there is one), and must look like a name.
    words = text.replace(":", " : ").split()
    last = max(i for i, w in enumerate(words) if COLLECTIVE & set(_tokens(w)))
    rest = [w for w in words[last + 1 :] if w != ":"]
    if 2 <= len(rest) <= 5 and all(w[:1].isupper() for w in rest if w.lower() not in PARTICLES):
        return " ".join(rest)
    return ""


def is_person(name: str) -> bool:
    """False for byline entries that are not people: "et al", "and others", collaborations."""
    return bool(person_part(name))


def name_key(name: str) -> str:
    """The key for "same name" lookups: folded, given names first, punctuation dropped.

    "Grave, Édouard", "Édouard Grave" and "Edouard  Grave" share the key "edouard grave".
    """
    parsed = parse_name(name)
    return " ".join(parsed.given + parsed.family)[:255]


def _family_score(a: ParsedName, b: ParsedName) -> float:
    ka, kb = a.family_key, b.family_key
    if not ka or not kb:
        return 0.0
    if ka == kb:
        return 1.0
    # Compound family names are often shortened: "Jiménez Moscoso" vs "Moscoso", "García-Pérez".
    sa, sb = set(a.family) - PARTICLES, set(b.family) - PARTICLES
    if sa and sb and (sa <= sb or sb <= sa):
        return 0.9
    similarity = JaroWinkler.normalized_similarity(ka, kb)
    # Transliteration variants ("Schroedinger"/"Schrodinger") stay close; other names do not.
    return similarity if similarity >= 0.9 else 0.0


# Given names that agree only nearly: one a character prefix of the other ("Wei"/"Weiwei",
# "Jun"/"Junjie") or one letter apart ("Jiaqi"/"Jiaqin"). Different people with one family
# name are common (long lists of Zhang, Wang and Li), so such a pair is plausible where the
# byline order puts it, never sure: it scores below every exact given name.
NEAR_GIVEN_SCORE = 0.7


def _given_score(a: ParsedName, b: ParsedName) -> tuple[float, str]:
    if not a.given or not b.given:
        return 0.6, MONONYM  # one side has no given name at all (a mononym or a collaboration)
    first_a, first_b = a.given[0], b.given[0]
    if not a.is_initial(0) and not b.is_initial(0):
        joined_a, joined_b = "".join(a.given), "".join(b.given)
        # "Tianyu" / "Tian-Yu" (split into tian yu) is one name written two ways.
        if first_a == first_b or joined_a == joined_b:
            return 1.0, EXACT
        if _nickname_of(first_a, first_b):
            return 0.85, NICKNAME
        if first_a[0] != first_b[0]:
            return 0.0, ""
        if (
            JaroWinkler.normalized_similarity(first_a, first_b) >= 0.9
            or joined_a.startswith(joined_b)
            or joined_b.startswith(joined_a)
        ):
            return NEAR_GIVEN_SCORE, NEAR_GIVEN
        # Same initial but different first names ("Thomas" vs "Timothy"): not the same person.
        return 0.0, ""
    # At least one side abbreviates its first given name. An abbreviation of several letters
    # ("Zh.", "Yu.", "Md.") must be spelt in the other side's name, in order and from its first
    # letter ("Zhores", "Yuri", "Mohammad"), not just share that letter; then the initials must
    # agree as far as both go ("J. R. Smith" / "John Ronald Smith"), a missing middle initial
    # allowed.
    short_first, long_first = sorted((first_a, first_b), key=len)
    if short_first[0] != long_first[0] or not _is_subsequence(short_first, long_first):
        return 0.0, ""
    ia, ib = a.initials, b.initials
    short, long_ = (ia, ib) if len(ia) <= len(ib) else (ib, ia)
    if long_.startswith(short):
        return 0.85, INITIALS
    if _is_subsequence(short, long_):
        return 0.75, INITIALS
    return 0.6, INITIALS


def _is_subsequence(short: str, long_: str) -> bool:
    it = iter(long_)
    return all(ch in it for ch in short)


def _score(a: ParsedName, b: ParsedName) -> tuple[float, str]:
    family = _family_score(a, b)
    if family == 0.0:
        return 0.0, ""
    given, how = _given_score(a, b)
    if given == 0.0:
        return 0.0, ""
    if family < 1.0 and how in (EXACT, INITIALS):
        how = FAMILY_VARIANT if how == EXACT else how
    return 0.55 * family + 0.45 * given, how


def _swapped(name: ParsedName) -> ParsedName:
    return ParsedName(name.family, name.given)


@lru_cache(maxsize=400_000)
def name_match(a: str, b: str) -> tuple[float, str]:
    """How likely two spellings name the same person, from 0 (no) to 1 (identical), and how
    they agree (EXACT, INITIALS, NICKNAME, REORDERED, NEAR_GIVEN, FAMILY_VARIANT, MONONYM).

    Copes with accents, initials, nicknames, hyphens, particles, given/family order written
    either way, and a team or collaboration glued to the name. Two different given names with
    one family name ("Jian Li" / "Wei Li") score 0, as do conflicting initials ("J. Smith" /
    "A. Smith"), and so does any entry that names no person ("et al", "ATLAS Collaboration").
    """
    a, b = person_part(a), person_part(b)
    if not a or not b:
        return 0.0, ""
    pa, pb = parse_name(a), parse_name(b)
    if not (pa.family or pa.given) or not (pb.family or pb.given):
        return 0.0, ""
    if pa.given + pa.family == pb.given + pb.family:
        return 1.0, EXACT
    best, how = _score(pa, pb)
    if best < 1.0:
        best, how = max((best, how), _reordered(pa, pb))
    if best == 0.0:
        best, how = _double_family(pa, pb)
    if best == 0.0 and (not pa.given or not pb.given):
        ta, tb = pa.given + pa.family, pb.given + pb.family
        # A mononym on one side: only a near-identical whole string counts.
        similarity = JaroWinkler.normalized_similarity(" ".join(ta), " ".join(tb))
        if similarity >= 0.95:
            best, how = similarity, MONONYM
    return round(best, 4), how


def _reordered(pa: ParsedName, pb: ParsedName) -> tuple[float, str]:
    """Given and family written the other way round ("Wang Wei" / "Wei Wang"), unless both
    sides said which part is which with a comma."""
    if (pa.ordered and pb.ordered) or not pa.given or not pb.given:
        return 0.0, ""
    tries = []
    if not pb.ordered:
        tries.append(_score(pa, _swapped(pb))[0])
    if not pa.ordered:
        tries.append(_score(_swapped(pa), pb)[0])
    best = 0.97 * max(tries, default=0.0)
    return (best, REORDERED) if best > 0.0 else (0.0, "")


def _double_family(pa: ParsedName, pb: ParsedName) -> tuple[float, str]:
    """A double family name read as a given name and a family name ("Juan Luis Cano
    Rodríguez" / "Juan Luis Cano"): plausible where the byline order puts it, never sure."""
    for a, b in ((pa, pb), (pb, pa)):
        if len(a.given) > 1 and not a.ordered and not a.is_initial(len(a.given) - 1):
            shifted = ParsedName(
                a.given[:-1], a.given[-1:] + a.family, abbreviated=a.abbreviated[:-1]
            )
            score, _ = _score(shifted, b)
            # Only when the given names left agree exactly ("Juan Luis" / "Juan Luis").
            if score > 0.0 and _given_score(shifted, b)[1] == EXACT:
                return min(score, NEAR_GIVEN_SCORE), FAMILY_VARIANT
    return 0.0, ""


def is_abbreviated(name: str) -> bool:
    """True when the given names are initials only ("E. Duflo")."""
    parsed = parse_name(name)
    return bool(parsed.given) and not parsed.has_full_given


def best_display_name(*candidates: str) -> str:
    """The fullest of several spellings: full given names beat initials, then longer wins."""
    names = [c.strip() for c in candidates if c and c.strip()]
    if not names:
        return ""
    return max(names, key=lambda n: (not is_abbreviated(n), "," not in n, len(n)))
