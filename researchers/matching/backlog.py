"""The backlog flow: which papers a batch takes next.

First the papers of a worker that died mid-batch (a claim that lapsed with no outcome, from a
partial index of the few claimed rows). Then never tried, newest first: the papers of the last
MATCH_RECENT_DAYS (new arrivals, one index range), then the sweep, which walks the whole table
in bounded stretches from where it stopped (`MatchSweep`) and so reaches every paper with no
match state, whatever its date and whatever became of the message that should have brought it
here. Then the retries that are due (a source did not know the paper, a service failed), from
the index on next_attempt_at. Every query is bounded: by the limit, by the recent window, or by
MATCH_SWEEP_ROWS papers examined per call.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from papers.models import Paper

from ..models import MatchSweep, PaperMatchState

# Papers read per query of the sweep: their match states are then looked up by primary key.
SWEEP_STRETCH = 2000


def papers_to_match(
    *, limit: int, since: datetime | None = None, now: datetime | None = None
) -> list[int]:
    """The next papers to match: those whose worker died mid-batch (their claim lapsed with
    no outcome), then never tried (newest first), then retries that are due.

    The first come first so that a dead worker's papers wait one lease (MATCH_CLAIM_SECONDS),
    not the whole backlog; an outcome clears `claimed_until`, so only they have one that
    passed (a partial index holds the few rows with a claim). With `since`, only papers
    published since then, newest first: the caller's window bounds the work, and the sweep is
    left where it stands.
    """
    now = now or timezone.now()
    lapsed = PaperMatchState.objects.filter(claimed_until__lte=now)
    if since:
        lapsed = lapsed.filter(published__gte=since)
    picked = list(lapsed.order_by("claimed_until").values_list("paper_id", flat=True)[:limit])
    never = Paper.objects.filter(match_state__isnull=True)
    if len(picked) < limit:
        if since:
            picked.extend(_newest_first(never.filter(published__gte=since))[: limit - len(picked)])
        else:
            recent = never.filter(published__gte=now - timedelta(days=settings.MATCH_RECENT_DAYS))
            picked.extend(_newest_first(recent)[: limit - len(picked)])
            if len(picked) < limit:
                picked.extend(sweep_never_tried(limit - len(picked), skip=set(picked)))
    if len(picked) < limit:
        due = PaperMatchState.objects.filter(next_attempt_at__lte=now)
        if since:
            due = due.filter(published__gte=since)
        picked.extend(
            due.exclude(paper_id__in=picked)
            .order_by("next_attempt_at")
            .values_list("paper_id", flat=True)[: limit - len(picked)]
        )
    return picked


def _newest_first(papers: QuerySet) -> QuerySet:
    return papers.order_by("-published", "-pk").values_list("pk", flat=True)


@dataclass
class _Position:
    """The last paper the sweep examined (none: the top, the newest paper)."""

    paper_id: int | None = None
    published: datetime | None = None
    undated: bool = False


def sweep_never_tried(want: int, *, skip: Collection[int] = ()) -> list[int]:
    """Up to `want` papers with no match state, from where the sweep stands, examining at most
    MATCH_SWEEP_ROWS papers; the sweep then stands after the last paper it handed out (or
    examined). Two workers sweeping at once may examine a stretch twice, never skip one, and
    the claims keep them from matching a paper twice."""
    sweep, _ = MatchSweep.objects.get_or_create(pk=1)
    at = _Position(sweep.paper_id, sweep.published, sweep.undated)
    budget = max(settings.MATCH_SWEEP_ROWS, 1)
    # A call that wraps round to the top must not hand out a paper twice.
    skip = set(skip)
    found: list[int] = []
    passes = 0
    while len(found) < want and budget > 0:
        rows = _stretch(at, min(SWEEP_STRETCH, budget))
        if not rows:
            if at.paper_id is None:
                break  # no paper at all
            at = _Position()
            passes += 1
            if passes > 1:
                break  # the whole table in this call: nothing else to find
            continue
        budget -= len(rows)
        tried = _tried_among(rows)
        for pk, published in rows:
            at = _Position(pk, published, published is None)
            if pk not in tried and pk not in skip:
                found.append(pk)
                skip.add(pk)
                if len(found) == want:
                    break
    MatchSweep.objects.filter(pk=1).update(
        paper_id=at.paper_id,
        published=at.published,
        undated=at.undated,
        passes=sweep.passes + passes,
        updated_at=timezone.now(),
    )
    return found


def _tried_among(rows: list[tuple[int, datetime | None]]) -> set[int]:
    """Which of these papers have a match state: the states of their date range first (one
    range of the index on PaperMatchState.published, where nearly all of them are found
    together, cheaper than thousands of lookups by key), then the rest by key (undated papers,
    or a state whose copied date is out of step with its paper's)."""
    dates = [published for _, published in rows if published is not None]
    tried: set[int] = set()
    if dates:
        tried.update(
            PaperMatchState.objects.filter(
                published__gte=min(dates), published__lte=max(dates)
            ).values_list("paper_id", flat=True)
        )
    rest = [pk for pk, _ in rows if pk not in tried]
    if rest:
        tried.update(
            PaperMatchState.objects.filter(paper_id__in=rest).values_list("paper_id", flat=True)
        )
    return tried


def _stretch(at: _Position, size: int) -> list[tuple[int, datetime | None]]:
    """The next `size` papers after `at`: dated ones newest first, then undated ones by id
    descending. Both read the (published, id) index from the position on."""
    papers = Paper.objects.order_by("-published", "-pk")
    if not at.undated:
        dated = papers.filter(published__isnull=False)
        if at.paper_id is not None:
            dated = dated.filter(published__lte=at.published).exclude(
                published=at.published, pk__gte=at.paper_id
            )
        rows = list(dated.values_list("pk", "published")[:size])
        if rows:
            return rows
    undated = papers.filter(published__isnull=True)
    if at.undated and at.paper_id is not None:
        undated = undated.filter(pk__lt=at.paper_id)
    return list(undated.values_list("pk", "published")[:size])
