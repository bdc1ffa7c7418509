"""Related to a set of papers: the papers nearest in meaning to a set (a researcher's papers, a
reader's saved ones; their vectors: papers.search.vectors), and how candidates rank by
closeness to the set.

Near the set is near its centre (the mean of its vectors), and, where a few members matter on
their own (the papers a reader saved last), near each of those too; the set itself is left out.
A candidate ranks by its best similarity to one member: close to one saved paper is closer
than halfway between two.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from wovepaper.lib.search.vectors import VectorBackend

from .core import paper_vectors_backend, papers_near


def papers_near_set(
    ids: Sequence[int],
    vectors: np.ndarray,
    count: int,
    *,
    also_near: Sequence[int] = (),
    backend: VectorBackend | None = None,
) -> list[list[tuple[int, float]]]:
    """The `count` papers nearest to the centre of the set (`ids`, their `vectors` row by row),
    then as many nearest to each row of `also_near`, each list nearest first as
    (paper id, cosine similarity), none of the set."""
    backend = backend or paper_vectors_backend()
    exclude = set(ids)
    anchors = [vectors.mean(axis=0), *(vectors[i] for i in also_near)]
    return [papers_near(anchor, count, exclude=exclude, backend=backend) for anchor in anchors]


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return rows / norms


def rank_by_closeness(
    liked: np.ndarray,
    candidates: np.ndarray,
    unliked: np.ndarray | None = None,
    *,
    unliked_weight: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each candidate row: its score, its best similarity to a `liked` row and the index of
    that row. The score is that best similarity, less `unliked_weight` times the candidate's
    best (positive) similarity to an `unliked` row: a paper marked unlike pushes down its
    neighbours, not just itself. Rows need not be unit vectors."""
    liked, candidates = _unit(liked), _unit(candidates)
    similarity = np.einsum("ij,kj->ik", candidates, liked)
    closest = similarity.argmax(axis=1)
    best = similarity[np.arange(len(candidates)), closest]
    score = best.copy()
    if unliked is not None and len(unliked):
        against = np.einsum("ij,kj->ik", candidates, _unit(unliked)).max(axis=1)
        score -= unliked_weight * np.maximum(against, 0.0)
    return score, best, closest
