"""Reads shared by pages, the API, feeds and tasks. Each runs a fixed number of queries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.apps import apps
from django.db.models import Prefetch, QuerySet

from .models import Authorship, Paper


def paper_list_prefetch(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """Papers with their bylines and matched researchers, in two extra queries for any page size."""
    return papers.prefetch_related(
        Prefetch(
            "authorships",
            queryset=Authorship.objects.select_related("researcher").order_by("position"),
        )
    )


def papers_with_bylines(papers: Sequence[Paper] | Iterable[Paper]) -> list[Paper]:
    """The same prefetch for a list already loaded (e.g. search results in rank order)."""
    from django.db.models import prefetch_related_objects

    papers = list(papers)
    prefetch_related_objects(
        papers,
        Prefetch(
            "authorships",
            queryset=Authorship.objects.select_related("researcher").order_by("position"),
        ),
    )
    return papers


def papers_listed() -> QuerySet[Paper]:
    """Papers that lists, feeds and the API show: not deleted upstream, and dated (lists are
    ordered by date, newest first)."""
    return Paper.objects.filter(is_deleted=False, published__isnull=False)


def papers_by_institution(papers: QuerySet[Paper], institution_id: int) -> QuerySet[Paper]:
    # papers sits below institutions in the dependency order, so the link model is looked up by
    # name instead of imported.
    link = apps.get_model("institutions", "AuthorshipInstitution")
    return papers.filter(
        id__in=link.objects.filter(institution_id=institution_id).values("paper_id")
    )


def papers_by_researcher(papers: QuerySet[Paper], researcher_id: int) -> QuerySet[Paper]:
    return papers.filter(
        id__in=Authorship.objects.filter(researcher_id=researcher_id).values("paper_id")
    )
