"""Writes for institutions: links from authorships, completion from ROR, the stored counts."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from django.db.models import Count, Q
from django.utils import timezone
from slugify import slugify

from wovepaper.lib.pagecache import pages_changed
from wovepaper.lib.search.engine_feed import engine_index_enqueue
from wovepaper.lib.text import folded_words

from .clients.ror import RorClient
from .models import AuthorshipInstitution, Institution
from .name_search import INSTITUTIONS

logger = logging.getLogger(__name__)

# An institution's natural keys: its ROR id and its OpenAlex id, either of which may be missing.
InstitutionKey = tuple[str | None, str | None]


class InstitutionRecord(Protocol):
    """An institution as a source describes it (e.g. OpenAlex's, on an authorship)."""

    @property
    def ror_id(self) -> str | None: ...
    @property
    def openalex_id(self) -> str | None: ...
    @property
    def name(self) -> str: ...
    @property
    def country_code(self) -> str: ...
    @property
    def type(self) -> str: ...


@dataclass(frozen=True)
class AuthorshipAffiliations:
    """The institutions a source gives for one authorship (empty: none)."""

    authorship_id: int
    paper_id: int
    institutions: Sequence[InstitutionRecord]


def institutions_link_authorships(*, affiliations: Sequence[AuthorshipAffiliations]) -> set[int]:
    """Make each authorship's institution links exactly those given. Idempotent.

    Institutions are found by ROR id, else OpenAlex id, and created when neither is known; a row
    known by one id gains the other. Returns the ids of the institutions linked before or after
    (whose counts may have changed).
    """
    wanted: dict[int, list[InstitutionKey]] = {}
    details: dict[InstitutionKey, InstitutionRecord] = {}
    for item in affiliations:
        for record in item.institutions:
            key = (record.ror_id, record.openalex_id)
            wanted.setdefault(item.authorship_id, []).append(key)
            details[key] = record
    by_ror, by_oa = _institutions_by_key(details)
    links: set[tuple[int, int]] = set()
    for authorship_pk, keys in wanted.items():
        for ror, oa in keys:
            pk = (by_ror.get(ror) if ror else None) or (by_oa.get(oa) if oa else None)
            if pk:
                links.add((authorship_pk, pk))
    paper_of = {item.authorship_id: item.paper_id for item in affiliations}
    current = set(
        AuthorshipInstitution.objects.filter(authorship_id__in=list(paper_of)).values_list(
            "authorship_id", "institution_id"
        )
    )
    stale = current - links
    if stale:
        stale_q = Q(pk__in=[])
        for authorship_pk, institution_pk in stale:
            stale_q |= Q(authorship_id=authorship_pk, institution_id=institution_pk)
        AuthorshipInstitution.objects.filter(stale_q).delete()
    AuthorshipInstitution.objects.bulk_create(
        [
            AuthorshipInstitution(authorship_id=a, institution_id=i, paper_id=paper_of[a])
            for a, i in links - current
        ],
        ignore_conflicts=True,
        batch_size=1000,
    )
    return {i for _, i in links | current}


def _institutions_by_key(
    details: dict[InstitutionKey, InstitutionRecord],
) -> tuple[dict[str, int], dict[str, int]]:
    """Institution ids by ROR id and by OpenAlex id for these records, creating the unknown
    ones and completing rows known by one id only (each id belongs to one row)."""
    rors = {r for r, _ in details if r}
    oas = {o for _, o in details if o}
    existing = list(
        Institution.objects.filter(Q(ror_id__in=rors) | Q(openalex_id__in=oas)).only(
            "pk", "ror_id", "openalex_id"
        )
    )
    by_ror = {i.ror_id: i.pk for i in existing if i.ror_id}
    by_oa = {i.openalex_id: i.pk for i in existing if i.openalex_id}
    to_create: dict[InstitutionKey, Institution] = {}
    for (ror, oa), record in details.items():
        pk = (by_ror.get(ror) if ror else None) or (by_oa.get(oa) if oa else None)
        if pk is None:
            name = (record.name or ror or oa or "")[:255]
            to_create.setdefault(
                (ror, oa),
                Institution(
                    name=name,
                    folded_name=folded_words(name)[:255],
                    ror_id=ror,
                    openalex_id=oa,
                    country_code=record.country_code,
                    type=record.type[:32],
                    slug=slugify(record.name or "")[:96],
                ),
            )
            continue
        # One id known, the other new: complete the row.
        missing = {}
        if ror and ror not in by_ror:
            missing["ror_id"], by_ror[ror] = ror, pk
        if oa and oa not in by_oa:
            missing["openalex_id"], by_oa[oa] = oa, pk
        if missing:
            Institution.objects.filter(pk=pk).update(**missing)
    if to_create:
        Institution.objects.bulk_create(to_create.values(), ignore_conflicts=True)
        fresh = Institution.objects.filter(
            Q(ror_id__in=[r for r, _ in to_create if r])
            | Q(openalex_id__in=[o for _, o in to_create if o])
        ).only("pk", "ror_id", "openalex_id")
        for institution in fresh:
            if institution.ror_id:
                by_ror[institution.ror_id] = institution.pk
            if institution.openalex_id:
                by_oa.setdefault(institution.openalex_id, institution.pk)
    return by_ror, by_oa


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
            record = client.organization(institution.ror_id or "")  # rows with a ROR id
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
    """Store paper_count for these institutions (one query per 500). Their researcher_count is
    the length of their list of researchers, stored with it by
    researchers.institution_members.institutions_refresh, which calls this first."""
    ids = sorted(set(institution_ids))
    now = timezone.now()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        counts = dict(
            AuthorshipInstitution.objects.filter(institution_id__in=chunk)
            .values("institution_id")
            .annotate(papers=Count("paper_id", distinct=True))
            .values_list("institution_id", "papers")
        )
        Institution.objects.bulk_update(
            [Institution(pk=pk, paper_count=counts.get(pk, 0), modified_at=now) for pk in chunk],
            ["paper_count", "modified_at"],
            batch_size=500,
        )
    pages_changed("institution", ids)
    # Paper counts order the name search; new institutions join it.
    engine_index_enqueue(INSTITUTIONS, ids)


def institutions_set_researcher_counts(counts: dict[int, int]) -> None:
    """Store each institution's number of researchers (the length of the list that states it)."""
    Institution.objects.bulk_update(
        [Institution(pk=pk, researcher_count=n) for pk, n in counts.items()],
        ["researcher_count"],
        batch_size=500,
    )
