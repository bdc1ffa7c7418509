"""The claim flow: a batch takes its papers before asking the sources about them, so that two
workers never match the same paper at the same time (and never send the same request twice).

A claim is held on the paper's PaperMatchState row (a first try inserts the row, status
"pending") as a token and a lease, `claimed_until`, MATCH_CLAIM_SECONDS from now. Writing the
batch's outcome releases it. A claim also moves `next_attempt_at` to the lease's end: if the
worker dies, the paper is due again for the backlog when the lease lapses, and nothing else is
needed to recover it.

On PostgreSQL the free rows are taken with SELECT … FOR UPDATE SKIP LOCKED, so that a worker
never waits on (or deadlocks with) another's claim; on SQLite, which writes one transaction at a
time, one conditional UPDATE does the same. Either way the rows a worker holds are the ones
carrying its token afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q

from papers.models import Paper

from ..models import PaperMatchState

# Written by the outcome of a batch (apply, fetch.record_failure): the claim is released.
RELEASED = {"claim": "", "claimed_until": None}
RELEASE_FIELDS = list(RELEASED)


def new_claim_token() -> str:
    return uuid.uuid4().hex


def claim_papers(
    papers: Sequence[Paper],
    *,
    now: datetime,
    due_only: bool = False,
    requested_at: datetime | None = None,
) -> list[Paper]:
    """Those of `papers` this batch now holds, in the order given.

    A paper is free when no live claim holds it. `due_only` (the backlog) also asks that it be
    due: never tried, or its next_attempt_at passed, so that a paper another worker finished a
    moment ago is not matched again. `requested_at` (a hand-off from the harvest) asks that it
    was not tried since that time, for the same reason.
    """
    if not papers:
        return []
    token = new_claim_token()
    until = now + timedelta(seconds=settings.MATCH_CLAIM_SECONDS)
    ids = sorted(p.pk for p in papers)
    free = PaperMatchState.objects.filter(paper_id__in=ids).filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lte=now)
    )
    if due_only:
        free = free.filter(next_attempt_at__lte=now)
    if requested_at is not None:
        free = free.filter(last_attempt_at__lt=requested_at)
    claim = {"claim": token, "claimed_until": until, "next_attempt_at": until}
    if connection.features.has_select_for_update_skip_locked:
        with transaction.atomic():
            taken = list(
                free.select_for_update(skip_locked=True)
                .order_by("paper_id")
                .values_list("paper_id", flat=True)
            )
            PaperMatchState.objects.filter(paper_id__in=taken).update(**claim)
    else:
        free.update(**claim)
    # Papers never tried have no row yet: inserting it is the claim, and of two workers
    # inserting one paper's row the second inserts nothing. Sorted, so that two inserts
    # waiting on each other's rows cannot deadlock.
    by_id = {p.pk: p for p in papers}
    PaperMatchState.objects.bulk_create(
        [
            PaperMatchState(
                paper_id=pk,
                status=PaperMatchState.PENDING,
                published=by_id[pk].published,
                last_attempt_at=now,
                **claim,
            )
            for pk in ids
        ],
        ignore_conflicts=True,
    )
    held = set(
        PaperMatchState.objects.filter(paper_id__in=ids, claim=token).values_list(
            "paper_id", flat=True
        )
    )
    return [p for p in papers if p.pk in held]
