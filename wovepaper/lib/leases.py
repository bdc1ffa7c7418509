"""Leases on work (named apart from a reader's claim of a researcher page): a batch takes its
rows before doing the work, so that two workers never do the same unit of work at the same
time, and a worker that dies lets go when its lease lapses.

A lease is a token and an expiry on the work's row (the columns `claim`, `claimed_until`), one
row per unit of work, keyed by the work's id. Rows with no live lease are free. On PostgreSQL
the free rows are taken with SELECT … FOR UPDATE SKIP LOCKED, so that a worker never waits on
(or deadlocks with) another's lease; on SQLite, which writes one transaction at a time, one
conditional UPDATE does the same. An id with no row yet gets one: inserting it is the lease, and
of two workers inserting one id's row the second inserts nothing. Either way the ids a worker
holds are those whose rows carry its token afterwards.

A batch that may work longer than its lease (matching waits on the services' rate limits and
Retry-After) keeps it with `LeaseKept`, a thread that renews the lease every third of it: the
lease can then be short, and a worker that dies lets go within one lease however long its
batch would have taken.

Used by matching (researchers.matching.lease, on PaperMatchState) and embedding
(papers.search.embedding_stage, on PaperEmbeddingClaim). Imports no app.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, models, transaction
from django.db.models import Q
from django.utils import timezone

from .repeating import Repeating

logger = logging.getLogger(__name__)


def new_lease_token() -> str:
    return uuid.uuid4().hex


def rows_lease(
    model: type[models.Model],
    ids: Iterable[int],
    *,
    key: str,
    now: datetime,
    until: datetime,
    new_row: Callable[[int, dict[str, Any]], models.Model],
    free: Q | None = None,
    values: dict[str, Any] | None = None,
    token: str | None = None,
) -> tuple[str, set[int]]:
    """Claim the rows of `model` whose `key` is one of `ids` until `until`; returns the token
    and the ids now held.

    A row is free when its lease is over at `now` and it meets `free` (the caller's own
    condition, e.g. "due"). Taking it writes the token, the lease and `values`. An id without
    a row gets `new_row(id, fields)`, where `fields` are the claim's (token, lease, values).
    `token` names the claim (a new one by default).
    """
    ids = sorted(set(ids))
    if not ids:
        return "", set()
    token = token or new_lease_token()
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


class LeaseKept(Repeating):
    """Renews the lease of the rows of `model` that the claim `token` holds to `seconds` from
    now, every third of it, on a thread of its own, for as long as a `with` block runs. The
    lease's end is also written to each of `also` (fields that must follow it). A renewal that
    fails is logged and tried again at the next beat: the lease covers two more."""

    def __init__(
        self,
        model: type[models.Model],
        token: str,
        *,
        seconds: float,
        also: Sequence[str] = (),
    ) -> None:
        super().__init__(interval=seconds / 3, name=f"claim-{token[:8]}")
        self.model = model
        self.token = token
        self.seconds = seconds
        self.also = tuple(also)

    def renew(self) -> int:
        """Extend the lease now; how many rows the claim still holds (none once released)."""
        until = timezone.now() + timedelta(seconds=self.seconds)
        fields = dict.fromkeys(("claimed_until", *self.also), until)
        return self.model._default_manager.filter(claim=self.token).update(**fields)

    def beat(self) -> None:
        try:
            self.renew()
        except Exception as exc:  # noqa: BLE001 (the next beat tries again)
            logger.warning("claim %s: lease renewal failed: %s", self.token, exc)
