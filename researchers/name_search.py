"""Researcher search through the search interface: names folded (case, accents), each query
word the start of a word of the name; the most prolific first. Merged records are not found
(their survivor is)."""

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
    given_name_initials,
)
from wovepaper.lib.search.orm import (
    changed_id_batches,
    id_batches,
    queryset_page,
    with_instances,
)

from .curation.queue import researchers_told_apart
from .models import Researcher
from .names import name_key
from .selectors import (
    NAME_SEARCH_MIN,
    RESEARCHER_ORDERING,
    researcher_latest_affiliation,
    researchers_named,
    researchers_public,
)


def researcher_documents(researcher_ids: Sequence[int]) -> Iterator[dict[str, Any]]:
    rows = Researcher.objects.filter(
        pk__in=list(researcher_ids), merged_into__isnull=True, is_person=True, hidden=False
    ).values_list("id", "display_name", "name_key", "paper_count")
    for researcher_id, display_name, key, paper_count in rows:
        # The key adds the given-first order of "Family, Given" bylines.
        yield {"id": researcher_id, "name": f"{display_name} {key}", "papers": paper_count}


class ResearcherDatabaseBackend(SearchBackend):
    """Name keys containing each folded word of the query (a trigram index on PostgreSQL).
    Counting the matches of a short name over millions of records is what the trigram index
    is slowest at, so the total says only whether another page follows."""

    engine = "database"

    def search(self, query: SearchQuery) -> SearchPage[int]:
        if len(name_key(query.text)) < NAME_SEARCH_MIN:
            return SearchPage()
        return queryset_page(researchers_named(query.text).order_by(*RESEARCHER_ORDERING), query)


RESEARCHERS = Collection(
    name="researchers",
    fields=(NameField("name", initials=True), IntegerField("papers")),
    sorts={"relevance": Sort("papers", descending=True)},
    documents=researcher_documents,
    changed_since=lambda since, size: changed_id_batches(Researcher.objects.all(), since, size),
    # A page its owner hid has no document: the engines drop it at its next change.
    id_batches=lambda size, after=0: id_batches(researchers_public(), size, after=after),
    count=lambda: researchers_public().count(),
    database=ResearcherDatabaseBackend,
)


def researcher_search_backend() -> SearchBackend:
    return backend_for(RESEARCHERS)


def researchers_search(query: str, *, offset: int = 0, limit: int = 20) -> SearchPage[Researcher]:
    """Researchers whose name has words starting with the query's words, most papers first."""
    if len(name_key(query or "")) < NAME_SEARCH_MIN:
        return SearchPage()
    found = researcher_search_backend().search(SearchQuery(text=query, offset=offset, limit=limit))
    # Lists of researchers show names and figures: their co-author network and counts by
    # field and position (JSON, up to 200 co-authors a row) are for their own page.
    return with_instances(
        found, Researcher.objects.defer("coauthors", "field_counts", "position_counts")
    )


def _names_person(words: list[str], key: str) -> bool:
    """Whether the query's folded `words` name the person of the name key `key`, not only
    words of it: the family name whole and last, each other word a whole word of the name or
    its initial ("ian sommerville" and "sommerville" name "i sommerville"; "som" and "ian" do
    not)."""
    named = key.split()
    return (
        bool(words)
        and bool(named)
        and words[-1] == named[-1]
        and all(
            word in named or (initial is not None and initial in named)
            for word, initial in zip(words, given_name_initials(words), strict=True)
        )
    )


def people_named(query: str, found: list[Researcher]) -> list[Researcher]:
    """Of the researchers a search found, those the query names, each with what tells
    same-name records apart: sources, years, fields, institutions and the latest affiliation
    (`latest_affiliation`). A fixed number of queries per record of a bounded list."""
    words = name_key(query or "").split()
    ids = [r.pk for r in found if _names_person(words, r.name_key)]
    if not ids:
        return []
    records = Researcher.objects.defer("coauthors", "position_counts").in_bulk(ids)
    people = researchers_told_apart([records[pk] for pk in ids if pk in records])
    for person in people:
        person.latest_affiliation = researcher_latest_affiliation(person)  # type: ignore[attr-defined]
    return people
