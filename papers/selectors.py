"""Reads shared by pages, the API, feeds and tasks. Each runs a fixed number of queries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db.models import Prefetch, QuerySet, prefetch_related_objects

from .models import Authorship, Paper


def _bylines() -> Prefetch:
    return Prefetch(
        "authorships",
        queryset=Authorship.objects.select_related("researcher").order_by("position"),
    )


def paper_list_prefetch(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """Papers with their bylines and matched researchers, in one extra query for any page size."""
    return papers.prefetch_related(_bylines())


def papers_with_bylines(papers: Sequence[Paper] | Iterable[Paper]) -> list[Paper]:
    """The same prefetch for a list already loaded (e.g. search results in rank order)."""
    papers = list(papers)
    prefetch_related_objects(papers, _bylines())
    return papers
