"""Researcher figures (h-index, citations, works total) from the sources, with source and date.

Semantic Scholar's figures are used when the record has an S2 author id, OpenAlex's otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from .clients.openalex import OpenAlexClient
from .clients.semantic_scholar import SemanticScholarClient
from .models import Researcher, ResearcherExternalId

logger = logging.getLogger(__name__)


def researchers_refresh_figures(
    researcher_ids: Iterable[int], *, clients=None, now: datetime | None = None
) -> int:
    """Fetch and store the figures of these researchers; returns how many were updated.

    A researcher a source does not know keeps its figures, with `figures_updated_at` set so
    that the refresh moves on to others. Raises ServiceError (nothing stored for the failed
    source) when a service cannot answer.
    """
    now = now or timezone.now()
    ids = list(dict.fromkeys(researcher_ids))
    if not ids:
        return 0
    s2, oa = ResearcherExternalId.SEMANTIC_SCHOLAR, ResearcherExternalId.OPENALEX
    held: dict[int, dict[str, str]] = {}
    for rid, source, value in (
        ResearcherExternalId.objects.filter(researcher_id__in=ids, source__in=[s2, oa])
        .order_by("pk")
        .values_list("researcher_id", "source", "value")
    ):
        held.setdefault(rid, {}).setdefault(source, value)
    by_s2 = {v[s2]: rid for rid, v in held.items() if s2 in v}
    by_oa = {v[oa]: rid for rid, v in held.items() if s2 not in v and oa in v}
    s2_client = clients.s2 if clients else SemanticScholarClient()
    oa_client = clients.openalex if clients else OpenAlexClient()
    # A record with no id of either source has no figures to fetch: mark it checked.
    with_ids = set(by_s2.values()) | set(by_oa.values())
    updates: dict[int, Researcher] = {
        rid: Researcher(pk=rid, figures_updated_at=now) for rid in ids if rid not in with_ids
    }
    try:
        for client, by_id, source in ((s2_client, by_s2, "s2"), (oa_client, by_oa, "openalex")):
            if not by_id:
                continue
            for author_id, record in client.authors(list(by_id)).items():
                row = Researcher(pk=by_id[author_id], figures_updated_at=now)
                if record is not None:
                    row.h_index, row.citation_count = record.h_index, record.citation_count
                    row.works_count, row.figures_source = record.works_count, source
                updates[row.pk] = row
    finally:
        if clients is None:
            s2_client.close()
            oa_client.close()
    found = [r for r in updates.values() if r.figures_source]
    unknown = [r for r in updates.values() if not r.figures_source]
    Researcher.objects.bulk_update(
        found,
        ["h_index", "citation_count", "works_count", "figures_source", "figures_updated_at"],
        batch_size=500,
    )
    Researcher.objects.bulk_update(unknown, ["figures_updated_at"], batch_size=500)
    return len(found)


def researchers_with_stale_figures(*, limit: int, now: datetime | None = None) -> list[int]:
    """Researchers whose figures are missing or older than FIGURES_MAX_AGE_DAYS, oldest first."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.FIGURES_MAX_AGE_DAYS)
    stale = Researcher.objects.filter(merged_into__isnull=True).filter(
        Q(figures_updated_at__isnull=True) | Q(figures_updated_at__lt=cutoff)
    )
    never = list(
        stale.filter(figures_updated_at__isnull=True)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    if len(never) >= limit:
        return never
    return never + list(
        stale.filter(figures_updated_at__lt=cutoff)
        .order_by("figures_updated_at", "pk")
        .values_list("pk", flat=True)[: limit - len(never)]
    )
