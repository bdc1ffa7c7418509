"""Papers like your list: new papers ranked by how close in meaning they are to the papers a
reader saved, each with the saved paper it is closest to.

Candidates are the new papers (published since `since`, RECOMMENDATION_DAYS back by default)
among the nearest POOL papers to a few anchors (the centre of the saved papers' vectors and the
ANCHORS most recently saved papers' own), and the new papers of the researchers the reader
follows. Each candidate scores its best cosine similarity to one saved paper, less
DISMISSAL_WEIGHT times its best similarity to a paper the reader marked "not relevant": a
dismissal pushes down its neighbours, not just itself. Only candidates at or above the search
page's similarity floor are shown (a related paper, not the least unrelated one).

The pool and the ranking are papers.related.like_papers' (the ranking alone, on vectors, is
what benchmarks/recommendations.py measures); what is the reader's (their lists, follows and
"not relevant" marks) is here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import QuerySet

from papers.archive_time import archive_time
from papers.models import Authorship, Paper
from papers.related.core import paper_vectors_backend
from papers.related.like_papers import papers_near_set, rank_by_closeness
from papers.search.vectors import paper_vectors
from papers.selectors import papers_with_short_bylines
from wovepaper.lib.search.vectors import similarity_floor

from ..follows import followed_researcher_ids
from .models import ReadingList, RecommendationDismissal, SavedPaper

# The saved papers (newest saved first) and dismissals whose vectors are read, at most.
SAVED_LOOKED_AT = 200
DISMISSALS_LOOKED_AT = 200
# Nearest papers read per anchor, and the anchors besides the centre.
POOL = 1_000
ANCHORS = 4
# New papers of followed researchers taken as candidates, at most.
FOLLOWED_CANDIDATES = 200
# How much a candidate's closeness to a dismissed paper counts against it.
DISMISSAL_WEIGHT = 0.5


def recommendation_days() -> int:
    return int(settings.RECOMMENDATION_DAYS)


@dataclass
class Recommendation:
    paper: Paper
    score: float
    closest: Paper
    # The list the closest saved paper is in (the feed and the digest name it).
    closest_list: ReadingList | None = None

    @property
    def reason(self) -> str:
        where = f" (in {self.closest_list.name})" if self.closest_list else ""
        return f"Close to “{self.closest.title}”{where}"


class Recommendations(list[Recommendation]):
    """Recommendations, and whether there was nothing saved for them to be like (so a page can
    say why it shows none without asking again)."""

    nothing_saved = False


def _nothing_saved() -> Recommendations:
    found = Recommendations()
    found.nothing_saved = True
    return found


def rank_candidates(
    saved: np.ndarray,
    candidates: np.ndarray,
    dismissed: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each candidate row: its score, its best similarity to a saved row and the index of
    that saved row, a dismissal weighing DISMISSAL_WEIGHT against its neighbours."""
    return rank_by_closeness(saved, candidates, dismissed, unliked_weight=DISMISSAL_WEIGHT)


def _saved_rows(saved: QuerySet[SavedPaper]) -> list[tuple[int, int]]:
    """(paper id, list id) of the newest saved, each paper once."""
    rows = saved.order_by("-created_at", "-id").values_list("paper_id", "reading_list_id")
    seen: dict[int, int] = {}
    for paper_id, list_id in rows[:SAVED_LOOKED_AT]:
        seen.setdefault(paper_id, list_id)
    return list(seen.items())


def _dismissed_vectors(user, model: str) -> np.ndarray | None:
    """The vectors of the reader's newest DISMISSALS_LOOKED_AT "not relevant" papers."""
    dismissed_ids = list(
        RecommendationDismissal.objects.filter(user=user)
        .order_by("-created_at", "-id")
        .values_list("paper_id", flat=True)[:DISMISSALS_LOOKED_AT]
    )
    return paper_vectors(dismissed_ids, model)[1] if dismissed_ids else None


def _recommend(
    *,
    user,
    saved: QuerySet[SavedPaper],
    count: int,
    since: datetime | None,
    lists: dict[int, ReadingList] | None = None,
) -> list[Recommendation]:
    saved_rows = _saved_rows(saved)
    if not saved_rows:
        return _nothing_saved()
    backend = paper_vectors_backend()
    model = backend.encoder.name
    saved_ids, saved_vectors = paper_vectors([p for p, _ in saved_rows], model)
    if not saved_ids:
        return []
    # New on the archive's own time: in a sample, every paper it holds (papers.archive_time).
    since = since or archive_time().window_start(recommendation_days())
    position = {paper_id: i for i, paper_id in enumerate(saved_ids)}
    # Anchors: the centre, and the most recently saved papers that have a vector.
    newest = [position[p] for p, _ in saved_rows if p in position][:ANCHORS]
    nearest = papers_near_set(saved_ids, saved_vectors, POOL, also_near=newest, backend=backend)
    pool = {paper_id for near in nearest for paper_id, _ in near}
    followed = followed_researcher_ids(user=user)
    if followed:
        pool.update(
            Authorship.objects.filter(
                researcher_id__in=followed, paper__published__gte=since
            ).values_list("paper_id", flat=True)[:FOLLOWED_CANDIDATES]
        )
    new = set(
        Paper.objects.filter(
            pk__in=list(pool), published__gte=since, is_deleted=False, is_withdrawn=False
        ).values_list("pk", flat=True)
    )
    # Neither a paper already in the reader's library nor one they dismissed.
    new -= set(
        SavedPaper.objects.filter(reading_list__user=user, paper_id__in=list(new)).values_list(
            "paper_id", flat=True
        )
    )
    new -= set(
        RecommendationDismissal.objects.filter(user=user, paper_id__in=list(new)).values_list(
            "paper_id", flat=True
        )
    )
    if not new:
        return []
    candidate_ids, candidate_vectors = paper_vectors(sorted(new), model)
    if not candidate_ids:
        return []
    score, best, closest = rank_candidates(
        saved_vectors, candidate_vectors, _dismissed_vectors(user, model)
    )
    floor = similarity_floor()
    order = [i for i in np.argsort(-score, kind="stable") if best[i] >= floor][:count]
    if not order:
        return []
    shown = [candidate_ids[i] for i in order]
    closest_ids = [saved_ids[closest[i]] for i in order]
    papers = Paper.objects.in_bulk([*shown, *closest_ids])
    papers_with_short_bylines([papers[p] for p in shown if p in papers])
    list_of = dict(saved_rows)
    found = []
    for i, paper_id, closest_id in zip(order, shown, closest_ids, strict=True):
        if paper_id in papers and closest_id in papers:
            found.append(
                Recommendation(
                    paper=papers[paper_id],
                    score=float(score[i]),
                    closest=papers[closest_id],
                    closest_list=(lists or {}).get(list_of[closest_id]),
                )
            )
    return found


def list_recommendations(
    *, reading_list: ReadingList, count: int = 10, since: datetime | None = None
) -> list[Recommendation]:
    """New papers like this list's, best first; [] while none of its papers has a vector. A
    bounded number of queries whatever the list's or the archive's size (the vector index's
    own aside)."""
    return _recommend(
        user=reading_list.user_id,
        saved=SavedPaper.objects.filter(reading_list=reading_list),
        count=count,
        since=since,
    )


def library_recommendations(
    *, user, count: int = 10, since: datetime | None = None
) -> list[Recommendation]:
    """New papers like the reader's whole library (the newest SAVED_LOOKED_AT saved papers of
    all their lists), each naming the list its closest saved paper is in: the feed and the
    digest."""
    lists = ReadingList.objects.filter(user=user).in_bulk()
    if not lists:
        return _nothing_saved()
    return _recommend(
        user=user,
        saved=SavedPaper.objects.filter(reading_list__in=list(lists)),
        count=count,
        since=since,
        lists=lists,
    )


def recommendation_of(
    *, user, paper: Paper, reading_list: ReadingList | None = None
) -> Recommendation | None:
    """`paper` as a recommendation to the reader, scored and explained as the list's page
    (`reading_list`) or the feed (None) does, without searching for candidates: how a
    recommendation whose "not relevant" was just undone is shown again in its place. None when
    the paper or every saved paper lacks a vector. A few queries, one per kind of row."""
    lists = None
    if reading_list is not None:
        saved = SavedPaper.objects.filter(reading_list=reading_list)
    else:
        lists = ReadingList.objects.filter(user=user).in_bulk()
        saved = SavedPaper.objects.filter(reading_list__in=list(lists))
    saved_rows = _saved_rows(saved)
    if not saved_rows:
        return None
    model = paper_vectors_backend().encoder.name
    saved_ids, saved_vectors = paper_vectors([p for p, _ in saved_rows], model)
    candidate_ids, candidate_vectors = paper_vectors([paper.pk], model)
    if not saved_ids or not candidate_ids:
        return None
    score, _, closest = rank_candidates(
        saved_vectors, candidate_vectors, _dismissed_vectors(user, model)
    )
    closest_id = saved_ids[int(closest[0])]
    closest_paper = Paper.objects.filter(pk=closest_id).first()
    if closest_paper is None:
        return None
    return Recommendation(
        paper=paper,
        score=float(score[0]),
        closest=closest_paper,
        closest_list=(lists or {}).get(dict(saved_rows)[closest_id]),
    )


def recommendation_dismiss(*, user: User, paper: Paper) -> bool:
    """Mark a recommended paper "not relevant": it is not recommended again and weighs against
    its neighbours (accounts.library.recommendations). Returns whether it is new; twice is once."""
    _, created = RecommendationDismissal.objects.get_or_create(user=user, paper=paper)
    return created


def recommendation_undismiss(*, user: User, paper_id: int) -> bool:
    """Take back a "not relevant": the paper may be recommended again and stops weighing
    against its neighbours. Returns whether it was marked; undoing twice is harmless."""
    deleted, _ = RecommendationDismissal.objects.filter(user=user, paper_id=paper_id).delete()
    return bool(deleted)


def recommendation_dismissals(*, user: User) -> QuerySet[RecommendationDismissal]:
    """The papers the reader marked not relevant, newest first (the (user, -created_at, -id)
    index), with the papers."""
    return (
        RecommendationDismissal.objects.filter(user=user)
        .select_related("paper")
        .order_by("-created_at", "-id")
    )
