"""Claims on work: a batch takes its rows before doing the work, so that two workers never do
the same unit of work at the same time, and a worker that dies lets go when its lease lapses.

A claim is a token and a lease on the work's row (`claim`, `claimed_until`), one row per unit
of work, keyed by the work's id. Rows with no live lease are free. On PostgreSQL the free rows
are taken with SELECT … FOR UPDATE SKIP LOCKED, so that a worker never waits on (or deadlocks
with) another's claim; on SQLite, which writes one transaction at a time, one conditional
UPDATE does the same. An id with no row yet gets one: inserting it is the claim, and of two
workers inserting one id's row the second inserts nothing. Either way the ids a worker holds
are those whose rows carry its token afterwards.

Used by matching (researchers.matching.claim, on PaperMatchState) and embedding
(papers.search.embedding_stage, on PaperEmbeddingClaim). Imports no app.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from django.db import connection, models, transaction
from django.db.models import Q


def new_claim_token() -> str:
    return uuid.uuid4().hex


def rows_claim(
    model: type[models.Model],
    ids: Iterable[int],
    *,
    key: str,
    now: datetime,
    until: datetime,
    new_row: Callable[[int, dict[str, Any]], models.Model],
    free: Q | None = None,
    values: dict[str, Any] | None = None,
) -> tuple[str, set[int]]:
    """Claim the rows of `model` whose `key` is one of `ids` until `until`; returns the token
    and the ids now held.

    A row is free when its lease is over at `now` and it meets `free` (the caller's own
    condition, e.g. "due"). Taking it writes the token, the lease and `values`. An id without
    a row gets `new_row(id, fields)`, where `fields` are the claim's (token, lease, values).
    """
    ids = sorted(set(ids))
    if not ids:
        return "", set()
    token = new_claim_token()
    claim = {"claim": token, "claimed_until": until, **(values or {})}
    manager = model._default_manager
    rows = manager.filter(**{f"{key}__in": ids}).filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lte=now)
    )
    if free is not None:
        rows = rows.filter(free)
    if connection.features.has_select_for_update_skip_locked:
        with transaction.atomic():
            taken = list(
                rows.select_for_update(skip_locked=True).order_by(key).values_list(key, flat=True)
            )
            manager.filter(**{f"{key}__in": taken}).update(**claim)
    else:
        rows.update(**claim)
    # Sorted, so that two inserts waiting on each other's rows cannot deadlock.
    manager.bulk_create([new_row(pk, claim) for pk in ids], ignore_conflicts=True)
    held = set(manager.filter(**{f"{key}__in": ids, "claim": token}).values_list(key, flat=True))
    return token, held
