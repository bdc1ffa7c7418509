"""Researchers working on similar things: the researchers whose papers lie nearest, in meaning,
to the centre of a researcher's own papers (the mean of their papers' vectors), each with the
count of their papers among the nearest and the closest of them as the reason. And, for a
signed-in reader, researchers like those they follow, each saying which followed one it is
like."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from papers.models import Authorship, Paper
from papers.related.core import cached_until_the_index_changes, counted, paper_vectors_backend
from papers.related.like_papers import papers_near_set
from papers.search.vectors import author_paper_vectors
from wovepaper.lib.search.vectors import VectorBackend

from .models import Researcher

SIMILAR_COUNT = 8
# A researcher's newest papers that make their centre, and the papers looked at around it.
OWN_PAPERS = 100
NEAREST_PAPERS = 200
# "More like the researchers you follow": the neighbours of the most recently followed few
# (each costs two queries the first time, none while cached), and how many are suggested.
FOLLOWED_LOOKED_AT = 5
SUGGESTED_COUNT = 6


def _close_to(papers_near: int, whose: str, closest: Paper) -> str:
    return f"{counted(papers_near, 'paper')} close to {whose} work, e.g. “{closest.title}”"


@dataclass
class SimilarResearcher:
    researcher: Researcher
    papers_near: int
    closest: Paper

    @property
    def reason(self) -> str:
        return _close_to(self.papers_near, "this researcher's", self.closest)


@dataclass
class FollowSuggestion:
    researcher: Researcher
    like: Researcher
    papers_near: int
    closest: Paper

    @property
    def reason(self) -> str:
        their_work = _close_to(self.papers_near, "their", self.closest)
        return f"Like {self.like.display_name}: {their_work}"


def _nearest_authors(
    researcher: Researcher, version: str | None = None
) -> list[tuple[int, int, int]]:
    """(researcher id, papers near, closest paper id), best first, cached under the vector
    index's version (`version`, when the caller has read it already)."""
    backend = paper_vectors_backend()
    key = f"researchers:similar:{researcher.pk}:{version or backend.version()}"
    return cached_until_the_index_changes(key, lambda: _authors_near(researcher, backend))


def _authors_near(researcher: Researcher, backend: VectorBackend) -> list[tuple[int, int, int]]:
    own, vectors = author_paper_vectors(researcher.pk, backend.encoder.name, newest=OWN_PAPERS)
    if not own:
        return []
    (near,) = papers_near_set(own, vectors, NEAREST_PAPERS, backend=backend)
    rank = {paper_id: position for position, (paper_id, _) in enumerate(near)}
    scores: dict[int, float] = {}
    counts: dict[int, int] = {}
    closest: dict[int, int] = {}
    authorships = Authorship.objects.filter(
        paper_id__in=list(rank),
        researcher__isnull=False,
        researcher__merged_into__isnull=True,
        researcher__is_person=True,
    ).exclude(researcher=researcher)
    similarity = dict(near)
    for paper_id, researcher_id in authorships.values_list("paper_id", "researcher_id"):
        scores[researcher_id] = scores.get(researcher_id, 0.0) + similarity[paper_id]
        counts[researcher_id] = counts.get(researcher_id, 0) + 1
        if researcher_id not in closest or rank[paper_id] < rank[closest[researcher_id]]:
            closest[researcher_id] = paper_id
    best = sorted(scores, key=lambda r: -scores[r])[:SIMILAR_COUNT]
    return [(r, counts[r], closest[r]) for r in best]


def similar_researchers(researcher: Researcher) -> list[SimilarResearcher]:
    """Up to SIMILAR_COUNT researchers, most similar first; [] while none of this researcher's
    papers is embedded."""
    found = _nearest_authors(researcher)
    if not found:
        return []
    people = Researcher.objects.in_bulk([r for r, _, _ in found])
    papers = Paper.objects.in_bulk([p for _, _, p in found])
    return [
        SimilarResearcher(researcher=people[r], papers_near=n, closest=papers[p])
        for r, n, p in found
        if r in people and p in papers
    ]


def more_like_followed(
    followed: Sequence[Researcher], *, exclude: Sequence[int] = ()
) -> list[FollowSuggestion]:
    """Up to SUGGESTED_COUNT researchers working on what the first FOLLOWED_LOOKED_AT of
    `followed` (most recently followed first) work on, taken in turn from each one's own
    nearest (its best, then the next best of each, …), none of `followed` or `exclude`, each
    with the followed researcher it is like. Queries: the vector index's version once (none
    with a usearch index file), one per followed researcher whose neighbours are not cached
    yet, and two."""
    looked_at = [r for r in followed if r.merged_into_id is None][:FOLLOWED_LOOKED_AT]
    version = paper_vectors_backend().version() if looked_at else None
    neighbours = [(r, _nearest_authors(r, version)) for r in looked_at]
    skip = {r.pk for r in followed} | set(exclude)
    picked: list[tuple[int, Researcher, int, int]] = []
    for depth in range(SIMILAR_COUNT):
        for like, found in neighbours:
            if depth < len(found) and found[depth][0] not in skip:
                researcher_id, near, closest = found[depth]
                skip.add(researcher_id)
                picked.append((researcher_id, like, near, closest))
    picked = picked[:SUGGESTED_COUNT]
    if not picked:
        return []
    people = Researcher.objects.in_bulk([r for r, _, _, _ in picked])
    papers = Paper.objects.in_bulk([p for _, _, _, p in picked])
    return [
        FollowSuggestion(researcher=people[r], like=like, papers_near=n, closest=papers[p])
        for r, like, n, p in picked
        if r in people and p in papers
    ]
