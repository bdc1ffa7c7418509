"""The matching backlog (researchers.matching.backlog): every paper that is not matched and not
recently tried is reached, in bounded steps, on each database vendor."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from researchers.matching import papers_to_match
from researchers.matching.backlog import sweep_never_tried
from researchers.models import MatchSweep, PaperMatchState


def tried(paper, **fields) -> PaperMatchState:
    fields.setdefault("status", PaperMatchState.MATCHED)
    return PaperMatchState.objects.create(
        paper=paper, published=paper.published, last_attempt_at=timezone.now(), **fields
    )


@pytest.fixture
def archive(paper_factory):
    """Papers a day apart going back 40 days; the newest and the oldest were matched, as the
    old sweep would have left them, and so were some in between."""
    now = timezone.now()
    papers = [paper_factory(published=now - timedelta(days=day)) for day in range(40)]
    for day in (0, 1, 39, *range(10, 20)):
        tried(papers[day])
    return papers


def never_tried(papers) -> set[int]:
    return {p.pk for p in papers if not PaperMatchState.objects.filter(paper=p).exists()}


@pytest.mark.django_db
def test_a_paper_between_the_recent_window_and_the_oldest_tried_is_reached(archive):
    # Papers 8 to 38 days old, not tried: the old sweep (last 7 days, or older than the oldest
    # paper tried) reached none of them once the 39-day-old paper was matched.
    picked = papers_to_match(limit=100)
    assert set(picked) == never_tried(archive)
    # Newest first: the recent window, then the sweep from the top.
    order = {
        p.pk: i for i, p in enumerate(sorted(archive, key=lambda p: p.published, reverse=True))
    }
    assert [order[pk] for pk in picked] == sorted(order[pk] for pk in picked)


@pytest.mark.django_db
def test_the_sweep_goes_a_bounded_stretch_at_a_time_and_starts_again_at_the_end(
    archive, paper_factory, settings
):
    undated = paper_factory(published=None)
    settings.MATCH_SWEEP_ROWS = 4
    waiting = never_tried([*archive, undated])
    seen: list[int] = []
    # At most 4 papers examined per call: the 41 papers are one pass in 11 calls (the last one
    # starts the next pass from the top).
    for _ in range(11):
        found = sweep_never_tried(100)
        assert len(found) <= 4
        seen.extend(found)
    assert set(seen) == waiting
    assert MatchSweep.objects.get().passes == 1
    # A paper that arrives (or loses its match state) behind the sweep is found on the next pass.
    PaperMatchState.objects.filter(paper=archive[15]).delete()
    again: list[int] = []
    for _ in range(11):
        again.extend(sweep_never_tried(100))
    assert archive[15].pk in again
    assert MatchSweep.objects.get().passes == 2


@pytest.mark.django_db
def test_a_dead_workers_papers_come_first_and_due_retries_after_papers_never_tried(
    paper_factory,
):
    now = timezone.now()
    old = [paper_factory(published=now - timedelta(days=100 + n)) for n in range(3)]
    tried(old[0], status=PaperMatchState.FAILED, next_attempt_at=now - timedelta(minutes=1))
    # A batch claimed it and its worker died: the claim lapsed a minute ago.
    tried(
        old[1],
        status=PaperMatchState.PENDING,
        claim="dead-worker",
        claimed_until=now - timedelta(minutes=1),
        next_attempt_at=now - timedelta(minutes=1),
    )
    # The dead worker's paper waits one lease, not the whole backlog.
    assert papers_to_match(limit=10, now=now) == [old[1].pk, old[2].pk, old[0].pk]
    assert papers_to_match(limit=1, now=now) == [old[1].pk]
