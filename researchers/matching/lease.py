"""The lease flow: a batch takes its papers before asking the sources about them, so that two
workers never match the same paper at the same time (and never send the same request twice).

A claim is held on the paper's PaperMatchState row (a first try inserts the row, status
"pending") as a token and a lease, `claimed_until`, MATCH_CLAIM_SECONDS from now, which a
thread of the batch's process renews every third of it while the batch works (`lease_kept`):
the lease is short (two minutes) however long the services make the batch wait, and a worker
that dies (kill -9, a lost machine) leaves its papers held for one lease at most. Writing the
batch's outcome releases it. A claim also moves `next_attempt_at` to the lease's end, so a
paper whose worker died is due again when the lease lapses, and the backlog takes such papers
before any other (`backlog.papers_to_match`): nothing else is needed to recover them.

How the rows are taken (SELECT … FOR UPDATE SKIP LOCKED on PostgreSQL, one conditional UPDATE on
SQLite, a first try's row inserted as the claim) is wovepaper.lib.leases, which embedding's
claims share.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q

from papers.models import Paper
from wovepaper.lib.leases import LeaseKept, rows_lease

from ..models import PaperMatchState

# Written by the outcome of a batch (apply, fetch.record_failure): the claim is released.
RELEASED = {"claim": "", "claimed_until": None}
RELEASE_FIELDS = list(RELEASED)


def match_states_write(states: Sequence[PaperMatchState], fields: Sequence[str]) -> None:
    """Insert or update these papers' states (one row a paper), writing `fields` and the lease's
    release: a batch's outcome ends its hold on the papers in the same statement."""
    PaperMatchState.objects.bulk_create(
        states,
        update_conflicts=True,
        unique_fields=["paper"],
        update_fields=[*fields, *RELEASE_FIELDS],
    )


def lease_papers(
    papers: Sequence[Paper],
    *,
    now: datetime,
    due_only: bool = False,
    requested_at: datetime | None = None,
    token: str | None = None,
) -> list[Paper]:
    """Those of `papers` this batch now holds, in the order given.

    A paper is free when no live claim holds it. `due_only` (the backlog) also asks that it be
    due: never tried, or its next_attempt_at passed, so that a paper another worker finished a
    moment ago is not matched again. `requested_at` (a hand-off from the harvest) asks that it
    was not tried since that time, for the same reason. `token` names the claim, to keep it
    with `lease_kept` (a new one by default).
    """
    if not papers:
        return []
    until = now + timedelta(seconds=settings.MATCH_CLAIM_SECONDS)
    free = Q()
    if due_only:
        free &= Q(next_attempt_at__lte=now)
    if requested_at is not None:
        free &= Q(last_attempt_at__lt=requested_at)
    by_id = {p.pk: p for p in papers}

    def first_try(pk: int, claim: dict[str, Any]) -> PaperMatchState:
        # Papers never tried have no row yet: inserting it is the claim.
        return PaperMatchState(
            paper_id=pk,
            status=PaperMatchState.PENDING,
            published=by_id[pk].published,
            last_attempt_at=now,
            **claim,
        )

    _, held = rows_lease(
        PaperMatchState,
        by_id,
        key="paper_id",
        now=now,
        until=until,
        new_row=first_try,
        free=free,
        values={"next_attempt_at": until},
        token=token,
    )
    return [p for p in papers if p.pk in held]


def lease_kept(token: str) -> LeaseKept:
    """Keeps the batch's claim `token` while a `with` block runs: its lease, and
    `next_attempt_at` with it, renewed every third of MATCH_CLAIM_SECONDS."""
    return LeaseKept(
        PaperMatchState,
        token,
        seconds=settings.MATCH_CLAIM_SECONDS,
        also=["next_attempt_at"],
    )
