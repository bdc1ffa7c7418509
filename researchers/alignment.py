"""Align a paper's arXiv byline with the author list a source gives for the same paper.

The byline order is the paper's and the sources keep it, so the first try is position by
position, each pair confirmed by name similarity. When the counts differ (a source dropped or
added an author, or cut the list) or a pair does not confirm, an order-preserving sequence
alignment takes over, and what is left is paired out of order only on a near-certain, unique name
match. A name that confirms nowhere stays unaligned: it is never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence

from .names import name_similarity

# A pair at the same position needs only a plausible name agreement ("E. Grave" / "Édouard Grave").
POSITION_CONFIRM = 0.6
# Out-of-position pairs in the sequence alignment need more.
SEQUENCE_CONFIRM = 0.75
# Pairs outside the order (swapped authors) need a near-certain match that no other name shares.
UNORDERED_CONFIRM = 0.9
# Above this many names the sequence alignment is limited to a band around the diagonal.
BAND_THRESHOLD = 300
BAND_MARGIN = 25

SourceNames = Sequence[Sequence[str]]


def _similarity(name: str, candidates: Sequence[str]) -> float:
    return max((name_similarity(name, c) for c in candidates if c), default=0.0)


def align_authors(byline: Sequence[str], source: SourceNames) -> list[int | None]:
    """For each byline name, the index of the source author it is, or None.

    `source[j]` holds one or more spellings of the j-th source author (OpenAlex gives both the
    display name and the name as printed). Each source author is used at most once.
    """
    n, m = len(byline), len(source)
    if not n or not m:
        return [None] * n
    if n == m:
        scores = [_similarity(byline[i], source[i]) for i in range(n)]
        if all(s >= POSITION_CONFIRM for s in scores):
            return list(range(n))
    result = _sequence_alignment(byline, source)
    return _pair_leftovers(byline, source, result)


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


def _pair_leftovers(
    byline: Sequence[str], source: SourceNames, result: list[int | None]
) -> list[int | None]:
    """Pair still-unaligned names out of order (swapped authors) when the match is unambiguous."""
    free_byline = [i for i, j in enumerate(result) if j is None]
    used = {j for j in result if j is not None}
    free_source = [j for j in range(len(source)) if j not in used]
    if not free_byline or not free_source or len(free_byline) * len(free_source) > 250_000:
        return result
    candidates: dict[int, list[tuple[float, int]]] = {}
    for i in free_byline:
        for j in free_source:
            similarity = _similarity(byline[i], source[j])
            if similarity >= UNORDERED_CONFIRM:
                candidates.setdefault(i, []).append((similarity, j))
    taken_by: dict[int, list[int]] = {}
    for i, options in candidates.items():
        if len(options) == 1:
            taken_by.setdefault(options[0][1], []).append(i)
    for j, claimants in taken_by.items():
        if len(claimants) == 1:
            result[claimants[0]] = j
    return result
