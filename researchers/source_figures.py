"""Researcher figures (h-index, citations, works total) from the sources, with source and date.

Semantic Scholar's figures are used when the record has an S2 author id, OpenAlex's otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from sources.openalex import OpenAlexClient
from sources.semantic_scholar import S2AuthorRecord, SemanticScholarClient
from wovepaper.lib.pagecache import pages_changed

from .models import Researcher, ResearcherExternalId

logger = logging.getLogger(__name__)


def researchers_refresh_figures(
    researcher_ids: Iterable[int], *, clients=None, now: datetime | None = None
) -> int:
    """Fetch and store the figures of these researchers; returns how many were updated.

    Every source id the records hold is asked, and each source's answer (name, figures, date)
    is kept on its ResearcherExternalId, so a page can set the sources side by side. The
    record's headline figures are Semantic Scholar's when it has an S2 id, OpenAlex's otherwise.
    A researcher a source does not know keeps its figures, with `figures_updated_at` set so that
    the refresh moves on to others. Raises ServiceError (nothing stored for the failed source)
    when a service cannot answer.
    """
    now = now or timezone.now()
    ids = list(dict.fromkeys(researcher_ids))
    if not ids:
        return 0
    s2, oa = ResearcherExternalId.SEMANTIC_SCHOLAR, ResearcherExternalId.OPENALEX
    held: dict[str, dict[str, ResearcherExternalId]] = {s2: {}, oa: {}}
    headline_source: dict[int, str] = {}
    for ext in ResearcherExternalId.objects.filter(
        researcher_id__in=ids, source__in=[s2, oa]
    ).order_by("pk"):
        held[ext.source].setdefault(ext.value, ext)
        if headline_source.get(ext.researcher_id) != s2:
            headline_source[ext.researcher_id] = ext.source
    s2_client = clients.s2 if clients else SemanticScholarClient()
    oa_client = clients.openalex if clients else OpenAlexClient()
    # A record with no id of either source has no figures to fetch: mark it checked.
    updates: dict[int, Researcher] = {
        rid: Researcher(pk=rid, figures_updated_at=now, modified_at=now)
        for rid in ids
        if rid not in headline_source
    }
    answered: list[ResearcherExternalId] = []
    try:
        for client, source in ((s2_client, s2), (oa_client, oa)):
            if not held[source]:
                continue
            for author_id, record in client.authors(list(held[source])).items():
                ext = held[source][author_id]
                rid = ext.researcher_id
                if record is not None:
                    # Each source's record names the person its own way.
                    ext.name = (
                        record.name if isinstance(record, S2AuthorRecord) else record.display_name
                    )
                    ext.h_index, ext.citation_count = record.h_index, record.citation_count
                    ext.works_count, ext.fetched_at = record.works_count, now
                    answered.append(ext)
                if headline_source[rid] != source:
                    continue
                row = updates.setdefault(
                    rid, Researcher(pk=rid, figures_updated_at=now, modified_at=now)
                )
                if record is not None:
                    row.h_index, row.citation_count = record.h_index, record.citation_count
                    row.works_count, row.figures_source = record.works_count, source
    finally:
        if clients is None:
            s2_client.close()
            oa_client.close()
    for rid in headline_source:
        updates.setdefault(rid, Researcher(pk=rid, figures_updated_at=now, modified_at=now))
    found = [r for r in updates.values() if r.figures_source]
    unknown = [r for r in updates.values() if not r.figures_source]
    Researcher.objects.bulk_update(
        found,
        [
            "h_index",
            "citation_count",
            "works_count",
            "figures_source",
            "figures_updated_at",
            "modified_at",
        ],
        batch_size=500,
    )
    Researcher.objects.bulk_update(unknown, ["figures_updated_at", "modified_at"], batch_size=500)
    pages_changed("researcher", list(updates))
    ResearcherExternalId.objects.bulk_update(
        answered,
        ["name", "h_index", "citation_count", "works_count", "fetched_at"],
        batch_size=500,
    )
    return len(found)


def researchers_with_stale_figures(*, limit: int, now: datetime | None = None) -> list[int]:
    """Researchers whose figures are missing or older than FIGURES_MAX_AGE_DAYS, oldest first."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.FIGURES_MAX_AGE_DAYS)
    stale = Researcher.objects.filter(merged_into__isnull=True, is_person=True).filter(
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


def source_figures_dated(recorded: dict[tuple[str, str], date]) -> int:
    """Figures a source gave on a known day (`recorded`: (source, id) → day, "s2" or
    "openalex") are as of that day: each source's record (`fetched_at`) and the headline figures
    of its researcher (`figures_updated_at`). Returns how many records were dated."""
    answered = ResearcherExternalId.objects.filter(
        Q(
            source=ResearcherExternalId.SEMANTIC_SCHOLAR,
            value__in=[v for s, v in recorded if s == "s2"],
        )
        | Q(
            source=ResearcherExternalId.OPENALEX,
            value__in=[v for s, v in recorded if s == "openalex"],
        ),
        fetched_at__isnull=False,
    ).select_related("researcher")
    records, researchers = [], []
    for ext in answered:
        as_of = datetime.combine(recorded[(ext.source, ext.value)], time(), tzinfo=UTC)
        ext.fetched_at = as_of
        records.append(ext)
        if ext.researcher.figures_source == ext.source:
            researchers.append(Researcher(pk=ext.researcher_id, figures_updated_at=as_of))
    ResearcherExternalId.objects.bulk_update(records, ["fetched_at"], batch_size=500)
    Researcher.objects.bulk_update(researchers, ["figures_updated_at"], batch_size=500)
    return len(records)
