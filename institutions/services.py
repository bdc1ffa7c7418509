"""Writes for institutions: completion from ROR and the stored counts."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime

from django.db.models import Count
from django.utils import timezone

from .clients.ror import RorClient
from .models import AuthorshipInstitution, Institution

logger = logging.getLogger(__name__)


def institutions_complete_from_ror(
    *,
    institution_ids: Iterable[int] | None = None,
    limit: int = 200,
    client: RorClient | None = None,
    now: datetime | None = None,
) -> int:
    """Fill names, acronyms, country, types and relationships from ROR, once per institution.

    Only institutions with a ROR id that were never completed are asked (`ror_checked_at` is
    null). An id ROR does not know is marked `ror_status="unknown"`. Raises ServiceError when ROR
    cannot answer; institutions done before the failure keep their update. Returns the number
    completed.
    """
    now = now or timezone.now()
    pending = Institution.objects.filter(ror_id__isnull=False, ror_checked_at__isnull=True)
    if institution_ids is not None:
        pending = pending.filter(pk__in=list(institution_ids))
    rows = list(pending.order_by("pk")[:limit])
    if not rows:
        return 0
    own = client is None
    client = client or RorClient()
    done = 0
    try:
        for institution in rows:
            record = client.organization(institution.ror_id)
            institution.ror_checked_at = now
            if record is None:
                institution.ror_status = "unknown"
                institution.save(update_fields=["ror_status", "ror_checked_at", "modified_at"])
                continue
            names = list(dict.fromkeys([*record.labels, *record.aliases]))
            institution.name = record.name[:255] or institution.name
            institution.other_names = [n for n in names if n != record.name]
            institution.acronyms = list(record.acronyms)
            institution.types = list(record.types)
            institution.type = (record.types[0] if record.types else institution.type)[:32]
            institution.country_code = record.country_code or institution.country_code
            institution.city = record.city[:255]
            institution.established = record.established
            institution.website = record.website[:500]
            institution.relationships = [
                {"type": r.type, "ror_id": r.ror_id, "label": r.label} for r in record.relationships
            ]
            institution.ror_status = record.status[:16]
            institution.save()
            done += 1
    finally:
        if own:
            client.close()
    return done


def institutions_update_stats(institution_ids: Iterable[int]) -> None:
    """Store paper_count and researcher_count for these institutions (one query per 500)."""
    ids = sorted(set(institution_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        counts = {
            row["institution_id"]: row
            for row in (
                AuthorshipInstitution.objects.filter(institution_id__in=chunk)
                .values("institution_id")
                .annotate(
                    papers=Count("paper_id", distinct=True),
                    researchers=Count("authorship__researcher_id", distinct=True),
                )
            )
        }
        Institution.objects.bulk_update(
            [
                Institution(
                    pk=pk,
                    paper_count=counts.get(pk, {}).get("papers", 0),
                    researcher_count=counts.get(pk, {}).get("researchers", 0),
                )
                for pk in chunk
            ],
            ["paper_count", "researcher_count"],
            batch_size=500,
        )
