"""The researchers of an institution: every listed person record on its bylines, with how many of
its papers each wrote there, stored (InstitutionResearcher) so that the institution's page states
a count its list can show in full, page after page, at any size.

The list is rebuilt for the institutions whose bylines changed: after matching, after byline
cleanup, and after a curator's merge or split moves bylines between records. One aggregate
query per chunk of institutions reads their bylines; the page reads one index range."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.db.models import Count

from institutions.models import AuthorshipInstitution, Institution
from institutions.services import institutions_set_researcher_counts, institutions_update_stats
from wovepaper.lib.batches import chunked

from .models import InstitutionResearcher, Researcher

CHUNK = 200


def institutions_refresh(institution_ids: Iterable[int]) -> None:
    """Paper counts, then the lists of researchers and their counts, for these institutions."""
    ids = sorted(set(institution_ids))
    if not ids:
        return
    institutions_update_stats(ids)
    institution_members_refresh(ids)


def institution_members_refresh(institution_ids: Iterable[int]) -> None:
    """Rebuild the stored researchers of these institutions, and their researcher_count."""
    for chunk in chunked(sorted(set(institution_ids)), CHUNK):
        rows = (
            AuthorshipInstitution.objects.filter(
                institution_id__in=chunk,
                authorship__researcher__merged_into__isnull=True,
                authorship__researcher__is_person=True,
                # What the lists show: a record its owner hid stays off them (ownership).
                authorship__researcher__hidden=False,
            )
            .values_list("institution_id", "authorship__researcher_id")
            .annotate(papers=Count("paper_id", distinct=True))
            .order_by()
        )
        members = [
            InstitutionResearcher(institution_id=inst, researcher_id=rid, papers=papers)
            for inst, rid, papers in rows
        ]
        counts = dict.fromkeys(chunk, 0)
        for member in members:
            counts[member.institution_id] += 1
        with transaction.atomic():
            InstitutionResearcher.objects.filter(institution_id__in=chunk).delete()
            InstitutionResearcher.objects.bulk_create(members, batch_size=2000)
            institutions_set_researcher_counts(counts)


def researcher_institution_ids(researcher_ids: Iterable[int]) -> list[int]:
    """The institutions on these records' bylines (bounded by their own bylines), for a refresh
    after their bylines moved."""
    ids = sorted(set(researcher_ids))
    found: set[int] = set()
    for chunk in chunked(ids, 1000):
        found.update(
            AuthorshipInstitution.objects.filter(authorship__researcher_id__in=chunk)
            .values_list("institution_id", flat=True)
            .distinct()
        )
    return sorted(found)


def institution_members(
    institution: Institution, *, offset: int = 0, limit: int = 50
) -> list[tuple[Researcher, int]]:
    """A page of the institution's researchers, most papers there first: (record, papers)."""
    members = (
        InstitutionResearcher.objects.filter(institution=institution)
        .select_related("researcher")
        .order_by("-papers", "researcher_id")[offset : offset + limit]
    )
    return [(member.researcher, member.papers) for member in members]
