"""Leases on the matching backlog (researchers.matching.lease), on each database vendor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from researchers.matching.lease import lease_papers
from researchers.models import PaperMatchState

NOW = datetime(2025, 3, 1, 12, tzinfo=UTC)


@pytest.fixture
def three(paper_factory):
    return [paper_factory() for _ in range(3)]


@pytest.mark.django_db
def test_a_paper_is_held_by_one_batch_until_its_lease_lapses(three, settings):
    settings.MATCH_CLAIM_SECONDS = 600
    assert lease_papers(three[:2], now=NOW) == three[:2]
    # A second batch over the same papers gets only the one nobody holds.
    assert lease_papers(three, now=NOW + timedelta(seconds=1)) == three[2:]
    state = PaperMatchState.objects.get(paper=three[0])
    assert state.status == PaperMatchState.PENDING and state.attempts == 0
    assert state.claimed_until == state.next_attempt_at == NOW + timedelta(seconds=600)
    # The holder died: once the lease lapses the paper is free, and due for the backlog.
    later = NOW + timedelta(seconds=601)
    assert lease_papers(three[:1], now=later, due_only=True) == three[:1]


@pytest.mark.django_db
def test_the_backlog_takes_only_papers_still_due(three):
    PaperMatchState.objects.create(
        paper=three[0], status=PaperMatchState.MATCHED, last_attempt_at=NOW, published=NOW
    )
    PaperMatchState.objects.create(
        paper=three[1],
        status=PaperMatchState.UNKNOWN,
        last_attempt_at=NOW,
        next_attempt_at=NOW + timedelta(days=14),
    )
    assert lease_papers(three, now=NOW, due_only=True) == three[2:]
    # Asked by name (a changed paper), a matched or unknown paper is matched again.
    assert lease_papers(three[:2], now=NOW) == three[:2]


@pytest.mark.django_db
def test_a_hand_off_leaves_papers_tried_since_it_was_sent(three):
    PaperMatchState.objects.create(
        paper=three[0], status=PaperMatchState.MATCHED, last_attempt_at=NOW
    )
    PaperMatchState.objects.create(
        paper=three[1], status=PaperMatchState.MATCHED, last_attempt_at=NOW - timedelta(days=1)
    )
    requested = NOW - timedelta(minutes=5)
    assert lease_papers(three, now=NOW, requested_at=requested) == three[1:]
