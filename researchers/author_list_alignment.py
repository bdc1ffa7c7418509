"""Align a paper's arXiv byline with the author list a source gives for the same paper.

The byline order is the paper's and the sources keep it, so the first try is position by
position, each pair confirmed by name similarity. When the counts differ (a source dropped or
added an author, or cut the list) or a pair does not confirm, an order-preserving sequence
alignment takes over, and what is left is paired out of order only on a near-certain name that
nothing else in either list could claim. A byline name still unpaired whose slot is free (its
neighbours paired with the source's neighbours) and whose family name agrees with the source's
name in that slot is paired with a low confidence, when nothing else could take that slot. A
name that confirms nowhere stays unaligned: it is never guessed, and entries that name no person
("et al", "ATLAS Collaboration") are never paired.

Every pair says how it was made (`Link.method`) and how sure it is (`Link.confidence`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .names import is_person, name_match, parse_name, person_part

# A pair at the same position needs only a plausible name agreement ("E. Grave" / "Édouard Grave").
POSITION_CONFIRM = 0.6
# Out-of-position pairs in the sequence alignment need more.
SEQUENCE_CONFIRM = 0.75
# Pairs outside the order (swapped authors) need a near-certain match that no other name shares.
UNORDERED_CONFIRM = 0.9
# Above this many names the sequence alignment is limited to a band around the diagonal.
BAND_THRESHOLD = 300
BAND_MARGIN = 25

# The two ways of pairing that the alignment adds to the name comparisons' own (names.EXACT...).
OUT_OF_ORDER = "out_of_order"
SAME_SLOT = "same_slot"
# A pair made on its slot and family name alone: the given names disagree ("Xiaoming Li" printed,
# "Ming Li" in the source's profile), so it is shown as uncertain and listed for the curators.
SAME_SLOT_CONFIDENCE = 0.5

# A source's author list that cannot be this paper's: past this many names on the longer side,
# a list this many times shorter than the other (an OpenAlex work of 4 authors for an arXiv
# byline of 300 is another record that took the paper's DOI).
MISMATCH_MIN_AUTHORS = 20
MISMATCH_RATIO = 5

SourceNames = Sequence[Sequence[str]]


def lists_disagree(byline: Sequence[str], source_count: int, *, truncated: bool = False) -> bool:
    """True when a source's author list cannot be the same paper as the byline: the counts of
    people are too far apart. A byline that ends "et al" or names a collaboration stands for
    more people than it lists, so a longer source list is no disagreement; a list the source
    cut (`truncated`) may be shorter than the byline."""
    people = sum(1 for name in byline if is_person(name))
    stands_for_more = people < len(byline)
    if source_count > people and stands_for_more:
        return False
    if source_count < people and truncated:
        return False
    small, large = sorted((people, source_count))
    return large >= MISMATCH_MIN_AUTHORS and small * MISMATCH_RATIO < large


@dataclass(frozen=True, slots=True)
class Link:
    """A byline name paired with the source author at `index`: how, and how sure (0 to 1)."""

    index: int
    method: str
    confidence: float


def _match(name: str, candidates: Sequence[str]) -> tuple[float, str]:
    return max((name_match(name, c) for c in candidates if c), default=(0.0, ""))


def _similarity(name: str, candidates: Sequence[str]) -> float:
    return _match(name, candidates)[0]


def align_authors(byline: Sequence[str], source: SourceNames) -> list[int | None]:
    """For each byline name, the index of the source author it is, or None.

    `source[j]` holds one or more spellings of the j-th source author (OpenAlex gives both the
    display name and the name as printed). Each source author is used at most once.
    """
    return [link.index if link else None for link in align_links(byline, source)]


def align_links(byline: Sequence[str], source: SourceNames) -> list[Link | None]:
    """`align_authors` with, for each pair, how it was made and how sure it is."""
    n, m = len(byline), len(source)
    if not n or not m:
        return [None] * n
    result: list[int | None] | None = None
    if n == m:
        scores = [_similarity(byline[i], source[i]) for i in range(n)]
        if all(s >= POSITION_CONFIRM for s in scores):
            result = list(range(n))
    if result is None:
        result = _sequence_alignment(byline, source)
    links: list[Link | None] = [None] * n
    for i, j in enumerate(result):
        if j is not None:
            score, method = _match(byline[i], source[j])
            links[i] = Link(j, method, round(score, 2))
    _pair_leftovers(byline, source, links)
    _pair_same_slots(byline, source, links)
    return links


def _sequence_alignment(byline: Sequence[str], source: SourceNames) -> list[int | None]:
    """Order-preserving alignment maximising the summed similarity of confirmed pairs.

    Gaps cost nothing, so a pair is only taken when it confirms; pairs on the diagonal (same
    offset as the counts allow) may confirm with the lower position threshold.
    """
    n, m = len(byline), len(source)
    # Long bylines (collaborations) are only compared near the diagonal; the cells outside
    # the band keep the row above's values, which is what a gap there would give.
    band = abs(n - m) + BAND_MARGIN if max(n, m) > BAND_THRESHOLD else max(n, m)
    # score[i][j]: best total over byline[:i] and source[:j].
    score = [[0.0] * (m + 1)]
    move = [[2] * (m + 1) for _ in range(n + 1)]  # 1 = pair, 2 = skip byline, 3 = skip source
    for i in range(1, n + 1):
        prev = score[i - 1]
        row = prev[:]
        score.append(row)
        moves = move[i]
        for j in range(max(1, i - band), min(m, i + band) + 1):
            best, how = prev[j], 2
            if row[j - 1] > best:
                best, how = row[j - 1], 3
            similarity = _similarity(byline[i - 1], source[j - 1])
            threshold = POSITION_CONFIRM if i == j or (n - i) == (m - j) else SEQUENCE_CONFIRM
            if similarity >= threshold and prev[j - 1] + similarity > best:
                best, how = prev[j - 1] + similarity, 1
            row[j], moves[j] = best, how
    result: list[int | None] = [None] * n
    i, j = n, m
    while i > 0 and j > 0:
        how = move[i][j]
        if how == 1:
            result[i - 1] = j - 1
            i, j = i - 1, j - 1
        elif how == 2:
            i -= 1
        else:
            j -= 1
    return result


def _pair_leftovers(byline: Sequence[str], source: SourceNames, links: list[Link | None]) -> None:
    """Pair still-unaligned names out of order (swapped authors) when the match is near-certain
    and nothing else in either list could claim either name."""
    free_byline = [i for i, link in enumerate(links) if link is None]
    used = {link.index for link in links if link is not None}
    free_source = [j for j in range(len(source)) if j not in used]
    n, m = len(byline), len(source)
    if not free_byline or not free_source or len(free_byline) * (m + n) > 250_000:
        return
    for i in free_byline:
        claims = [(j, _match(byline[i], source[j])) for j in range(m)]
        claims = [(j, match) for j, match in claims if match[0] > 0.0]
        if len(claims) != 1:
            continue
        j, (score, _) = claims[0]
        if j in used or score < UNORDERED_CONFIRM:
            continue
        # The source name must be claimable by this byline name alone.
        if any(k != i and _similarity(byline[k], source[j]) > 0.0 for k in range(n)):
            continue
        links[i] = Link(j, OUT_OF_ORDER, round(score * 0.9, 2))
        used.add(j)


def _family_key(name: str) -> str:
    return parse_name(person_part(name)).family_key


def _pair_same_slots(byline: Sequence[str], source: SourceNames, links: list[Link | None]) -> None:
    """Pair a byline name with the source name in its slot when the family names agree and
    nothing else could take that slot, with a low confidence (the given names disagree)."""
    n, m = len(byline), len(source)
    free_byline = [i for i, link in enumerate(links) if link is None]
    if not free_byline:
        return
    used = {link.index for link in links if link is not None}
    byline_families = [_family_key(name) for name in byline]
    source_families = [{_family_key(c) for c in spellings if c} for spellings in source]
    for i in free_byline:
        if i == 0:
            j = 0
        elif (before := links[i - 1]) is not None:
            j = before.index + 1
        else:
            continue
        if j >= m or j in used:
            continue
        after = links[i + 1] if i + 1 < n else None
        if not ((i == n - 1 and j == m - 1) or (after is not None and after.index == j + 1)):
            continue
        family = byline_families[i]
        if not family or family not in source_families[j]:
            continue
        # Nothing else could take the slot: every other name with that family name, in either
        # list, is paired already (two unpaired Zhangs side by side stay unpaired). Where the
        # family name is shared with paired names (many Wangs in one list), the given names
        # must at least start alike ("Wenling" / "Wen-Ching"), as a name alone in its family
        # need not.
        others_byline = [k for k in range(n) if k != i and byline_families[k] == family]
        others_source = [k for k in range(m) if k != j and family in source_families[k]]
        if any(links[k] is None for k in others_byline):
            continue
        if any(k not in used for k in others_source):
            continue
        if (others_byline or others_source) and not _given_initials_agree(byline[i], source[j]):
            continue
        links[i] = Link(j, SAME_SLOT, SAME_SLOT_CONFIDENCE)
        used.add(j)


def _given_initials_agree(name: str, spellings: Sequence[str]) -> bool:
    initial = parse_name(person_part(name)).initials[:1].lower()
    return bool(initial) and any(
        parse_name(person_part(c)).initials[:1].lower() == initial for c in spellings if c
    )
