"""Institution search through the search interface: names folded (case, accents), each query
word the start of a word of the name; those with the most papers first."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from wovepaper.lib.search import (
    Collection,
    IntegerField,
    NameField,
    SearchBackend,
    SearchPage,
    SearchQuery,
    Sort,
    backend_for,
)
from wovepaper.lib.search.orm import (
    changed_id_batches,
    id_batches,
    queryset_page,
    with_instances,
)

from .models import Institution
from .selectors import INSTITUTION_ORDERING, institutions_named


def _clean(query: str) -> str:
    return " ".join((query or "").split())


def institution_documents(institution_ids: Sequence[int]) -> Iterator[dict[str, Any]]:
    rows = Institution.objects.filter(pk__in=list(institution_ids)).values_list(
        "id", "name", "paper_count"
    )
    for institution_id, name, paper_count in rows:
        yield {"id": institution_id, "name": name, "papers": paper_count}


class InstitutionDatabaseBackend(SearchBackend):
    """Folded names containing each folded word of the query ("zurich" finds "ETH Zürich"; a
    trigram index on PostgreSQL). The total says only whether another page follows."""

    engine = "database"

    def search(self, query: SearchQuery) -> SearchPage[int]:
        text = _clean(query.text)
        if len(text) < 2:
            return SearchPage()
        return queryset_page(institutions_named(text).order_by(*INSTITUTION_ORDERING), query)


INSTITUTIONS = Collection(
    name="institutions",
    fields=(NameField("name"), IntegerField("papers")),
    sorts={"relevance": Sort("papers", descending=True)},
    documents=institution_documents,
    changed_since=lambda since, size: changed_id_batches(Institution.objects.all(), since, size),
    id_batches=lambda size, after=0: id_batches(Institution.objects.all(), size, after=after),
    count=Institution.objects.count,
    database=InstitutionDatabaseBackend,
)


def institution_search_backend() -> SearchBackend:
    return backend_for(INSTITUTIONS)


def institutions_search(query: str, *, offset: int = 0, limit: int = 20) -> SearchPage[Institution]:
    """Institutions whose name matches the query, those with the most papers first."""
    if len(_clean(query)) < 2:
        return SearchPage()
    found = institution_search_backend().search(SearchQuery(text=query, offset=offset, limit=limit))
    return with_instances(found, Institution.objects.all())
