"""Researchers working on similar things: the researchers whose papers lie nearest, in meaning,
to the centre of a researcher's own papers (the mean of their papers' vectors), each with the
count of their papers among the nearest and the closest of them as the reason. And, for a
signed-in reader, researchers like those they follow, each saying which followed one it is
like."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.core.cache import cache
from django.db.models import F

from papers.models import Authorship, Paper, PaperEmbedding
from papers.search import PAPERS
from wovepaper.lib.embeddings import from_stored
from wovepaper.lib.search import vector_backend_for

from .models import Researcher

SIMILAR_COUNT = 8
# A researcher's newest papers that make their centre, and the papers looked at around it.
OWN_PAPERS = 100
NEAREST_PAPERS = 200
CACHE_SECONDS = 24 * 3600
# "More like the researchers you follow": the neighbours of the most recently followed few
# (each costs two queries the first time, none while cached), and how many are suggested.
FOLLOWED_LOOKED_AT = 5
SUGGESTED_COUNT = 6


@dataclass
class SimilarResearcher:
    researcher: Researcher
    papers_near: int
    closest: Paper

    @property
    def reason(self) -> str:
        count = f"{self.papers_near} paper{'s' if self.papers_near != 1 else ''}"
        return f"{count} close to this researcher's work, e.g. “{self.closest.title}”"


@dataclass
class FollowSuggestion:
    researcher: Researcher
    like: Researcher
    papers_near: int
    closest: Paper

    @property
    def reason(self) -> str:
        count = f"{self.papers_near} paper{'s' if self.papers_near != 1 else ''}"
        return (
            f"Like {self.like.display_name}: {count} close to their work, "
            f"e.g. “{self.closest.title}”"
        )


def _nearest_authors(
    researcher: Researcher, version: str | None = None
) -> list[tuple[int, int, int]]:
    """(researcher id, papers near, closest paper id), best first, cached under the vector
    index's version (`version`, when the caller has read it already)."""
    backend = vector_backend_for(PAPERS)
    key = f"researchers:similar:{researcher.pk}:{version or backend.version()}"
    found = cache.get(key)
    if found is not None:
        return found
    # One query: the vectors of this researcher's newest papers, current ones only.
    rows = list(
        PaperEmbedding.objects.filter(
            paper__authorships__researcher=researcher,
            paper__is_deleted=False,
            model=backend.encoder.name,
            source_hash=F("paper__source_hash"),
        )
        .order_by("-paper__published")
        .values_list("paper_id", "dimensions", "vector")[:OWN_PAPERS]
    )
    if not rows:
        cache.set(key, [], CACHE_SECONDS)
        return []
    own = [r[0] for r in rows]
    vectors = from_stored([r[2] for r in rows], rows[0][1])
    centre = vectors.mean(axis=0)
    centre /= np.linalg.norm(centre) or 1.0
    near = backend.similar_to_vector(centre, NEAREST_PAPERS, exclude=set(own))
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
    found = [(r, counts[r], closest[r]) for r in best]
    cache.set(key, found, CACHE_SECONDS)
    return found


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
    version = vector_backend_for(PAPERS).version() if looked_at else None
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
