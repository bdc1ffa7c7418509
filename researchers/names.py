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

from rapidfuzz.distance import JaroWinkler

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
_COLLECTIVE = frozenset(
    {
        "collaboration",
        "collaborations",
        "consortium",
        "team",
        "group",
        "panel",
        "committee",
        "organization",
        "organisation",
        "association",
        "society",
        "network",
        "initiative",
    }
)
_FILLER = frozenset({"the", "for", "and", "of", "on", "behalf"})


@dataclass(frozen=True, slots=True)
class ParsedName:
    """A name split into given-name tokens and family-name tokens, all folded to ASCII."""

    given: tuple[str, ...]
    family: tuple[str, ...]
    # True when the name was written "Family, Given", so its order is known, not guessed.
    ordered: bool = False

    @property
    def family_key(self) -> str:
        return "".join(t for t in self.family if t not in PARTICLES) or "".join(self.family)

    @property
    def initials(self) -> str:
        return "".join(t[0] for t in self.given if t)

    @property
    def has_full_given(self) -> bool:
        return any(len(t) > 1 for t in self.given)


def _tokens(text: str) -> list[str]:
    # Hyphens and dots separate tokens: "Marie-Anne" → marie anne, "M.-A." → m a, "J.R.R." → j r r.
    return _TOKEN.findall(fold(text))


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
            given = [t for t in tail_tokens if t not in SUFFIXES]
            return ParsedName(tuple(given), tuple(family), ordered=True)
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
    given = [t for w in tokens_per_word[:idx] for t in w]
    # Some records put the suffix first ("Jr. Rubens Belfort"): it is not a given name.
    given = [t for t in given if t not in SUFFIXES] or given
    family = [t for w in tokens_per_word[idx:] for t in w]
    return ParsedName(tuple(given), tuple(family))


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


def _given_score(a: ParsedName, b: ParsedName) -> float:
    if not a.given or not b.given:
        return 0.6  # one side has no given name at all (a mononym or a collaboration)
    first_a, first_b = a.given[0], b.given[0]
    if first_a[0] != first_b[0]:
        return 0.0
    if len(first_a) > 1 and len(first_b) > 1:
        if first_a == first_b:
            return 1.0
        if JaroWinkler.normalized_similarity(first_a, first_b) >= 0.9:
            return 0.9
        # "Tianyu" vs "Tian-Yu" (split into tian yu), or "Jean" vs "Jean-Pierre".
        joined_a, joined_b = "".join(a.given), "".join(b.given)
        if joined_a.startswith(joined_b) or joined_b.startswith(joined_a):
            return 0.9
        # Same initial but different first names ("Thomas" vs "Timothy"): not the same person.
        return 0.0
    # At least one side writes the first given name as an initial: the initials must agree as
    # far as both go ("J. R. Smith" / "John Ronald Smith"); a missing middle initial is allowed.
    ia, ib = a.initials, b.initials
    short, long_ = (ia, ib) if len(ia) <= len(ib) else (ib, ia)
    if long_.startswith(short):
        return 0.85
    if _is_subsequence(short, long_):
        return 0.75
    return 0.6


def _is_subsequence(short: str, long_: str) -> bool:
    it = iter(long_)
    return all(ch in it for ch in short)


def _score(a: ParsedName, b: ParsedName) -> float:
    family = _family_score(a, b)
    if family == 0.0:
        return 0.0
    given = _given_score(a, b)
    if given == 0.0:
        return 0.0
    return 0.55 * family + 0.45 * given


@lru_cache(maxsize=400_000)
def name_similarity(a: str, b: str) -> float:
    """How likely two spellings name the same person, from 0 (no) to 1 (identical).

    Copes with accents, initials, hyphens, particles and given/family order written either way.
    Two different given names with one family name ("Jian Li" / "Wei Li") score 0, as do
    conflicting initials ("J. Smith" / "A. Smith").
    """
    pa, pb = parse_name(a), parse_name(b)
    if not (pa.family or pa.given) or not (pb.family or pb.given):
        return 0.0
    if pa.given + pa.family == pb.given + pb.family:
        return 1.0
    best = _score(pa, pb)
    # Given and family written the other way round ("Wang Wei" / "Wei Wang"), unless both
    # sides said which part is which with a comma.
    if best < 1.0 and not (pa.ordered and pb.ordered) and pa.given and pb.given:
        swapped = ParsedName(pb.family, pb.given)
        if not pb.ordered:
            best = max(best, 0.97 * _score(pa, swapped))
        swapped_a = ParsedName(pa.family, pa.given)
        if not pa.ordered:
            best = max(best, 0.97 * _score(swapped_a, pb))
    if best == 0.0:
        ta, tb = pa.given + pa.family, pb.given + pb.family
        if _COLLECTIVE & set(ta) and _COLLECTIVE & set(tb):
            # "The ATLAS Collaboration" / "ATLAS Collaboration": the words that are not filler.
            # An acronym may be added in brackets: "... Climate Change (IPCC)".
            core_a, core_b = set(ta) - _FILLER, set(tb) - _FILLER
            small, large = sorted((core_a, core_b), key=len)
            best = (
                0.95 if len(small) >= 2 and small <= large and len(large) - len(small) <= 1 else 0.0
            )
        elif (not pa.given or not pb.given) and ta and tb:
            # A mononym on one side: only a near-identical whole string counts.
            similarity = JaroWinkler.normalized_similarity(" ".join(ta), " ".join(tb))
            best = similarity if similarity >= 0.95 else 0.0
    return round(best, 4)


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
