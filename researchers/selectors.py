"""Reads for researcher pages and lists. Every function runs a fixed number of queries: the page
figures are stored on Researcher by matching, never aggregated over authorships here."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import F, Q, QuerySet

from papers.models import Paper
from papers.selectors import paper_list_prefetch

from .models import CurationEntry, Researcher, ResearcherExternalId
from .names import name_key

# A chain of merges longer than this is a curation mistake (or a cycle); stop following it.
MAX_MERGE_HOPS = 10

PAPER_SORTS = {
    "newest": ("-published", "-id"),
    "oldest": ("published", "id"),
    "cited": (F("cited_by_count").desc(nulls_last=True), "-published", "-id"),
}

LIST_SORTS = {
    "papers": ("-paper_count", "id"),
    "h_index": ("-h_index", "id"),
    "name": ("name_key", "id"),
}

EXTERNAL_URLS = {
    ResearcherExternalId.SEMANTIC_SCHOLAR: "https://www.semanticscholar.org/author/{}",
    ResearcherExternalId.OPENALEX: "https://openalex.org/{}",
    ResearcherExternalId.ORCID: "https://orcid.org/{}",
}


def researcher_resolve(pk: int) -> tuple[Researcher | None, bool]:
    """The record for `pk`, following `merged_into` to the final survivor.

    Returns (researcher, was_merged). One query for a record that was never merged; for a merged
    one, one per hop and one for the survivor. A chain that does not end (a data error) shows
    the record asked for.
    """
    records = Researcher.objects.select_related("most_cited_paper")
    researcher = records.filter(pk=pk).first()
    if researcher is None or researcher.merged_into_id is None:
        return researcher, False
    survivor = researcher_survivor_ids([researcher.merged_into_id]).get(researcher.merged_into_id)
    if survivor is None or survivor == pk:
        return researcher, False
    return records.filter(pk=survivor).first(), True


def researcher_external_links(researcher: Researcher) -> list[dict]:
    links = []
    for ext in researcher.external_ids.order_by("source", "value"):
        template = EXTERNAL_URLS.get(ext.source)
        # Sources hand out both bare ids and URLs (https://openalex.org/A…, https://orcid.org/…).
        value = ext.value.rstrip("/").rsplit("/", 1)[-1]
        links.append(
            {
                "source": ext.source,
                "label": ext.get_source_display(),
                "value": value,
                "url": template.format(value) if template else "",
            }
        )
    return links


def researcher_same_name(researcher: Researcher, *, limit: int = 8) -> list[Researcher]:
    """Other live records with the same name key: other people, or unmerged duplicates."""
    if not researcher.name_key:
        return []
    return list(
        Researcher.objects.filter(name_key=researcher.name_key, merged_into__isnull=True)
        .exclude(pk=researcher.pk)
        .order_by("-paper_count", "id")[:limit]
    )


def researcher_papers(
    researcher: Researcher,
    *,
    category: str = "",
    sort: str = "newest",
    offset: int = 0,
    limit: int = 24,
) -> list[Paper]:
    """A page of the researcher's papers (fetch limit+1 to know whether a next page exists)."""
    # Driven from the (researcher, paper) index: the work is bounded by this researcher's papers,
    # whatever the size of the archive. The category test reads Paper.categories on those rows
    # instead of joining PaperCategory, which the planner would hash-join over a whole category.
    papers = Paper.objects.filter(authorships__researcher=researcher)
    if category:
        papers = papers.filter(
            Q(categories=category)
            | Q(categories__startswith=f"{category} ")
            | Q(categories__endswith=f" {category}")
            | Q(categories__contains=f" {category} ")
        )
    papers = papers.order_by(*PAPER_SORTS.get(sort, PAPER_SORTS["newest"]))
    rows = paper_list_prefetch(papers)[offset : offset + limit]
    # One person matched at two positions of a paper (a curation slip) would repeat a row;
    # dropping it here is cheaper than DISTINCT over whole paper rows.
    return list({paper.pk: paper for paper in rows}.values())


def researchers_browse(
    *, sort: str = "papers", offset: int = 0, limit: int = 50
) -> list[Researcher]:
    qs: QuerySet[Researcher] = Researcher.objects.filter(merged_into__isnull=True)
    if sort == "h_index":
        # Rows without an h-index would sort first in a descending index scan; leave them out.
        qs = qs.filter(h_index__isnull=False)
    return list(qs.order_by(*LIST_SORTS.get(sort, LIST_SORTS["papers"]))[offset : offset + limit])


def researchers_search(query: str, *, offset: int = 0, limit: int = 20) -> list[Researcher]:
    """Researchers whose name key contains the normalised query (a trigram index on PostgreSQL)."""
    key = name_key(query)
    if len(key) < 2:
        return []
    return list(
        Researcher.objects.filter(Q(name_key__contains=key), merged_into__isnull=True).order_by(
            "-paper_count", "id"
        )[offset : offset + limit]
    )


def researcher_survivor_ids(researcher_ids: Iterable[int]) -> dict[int, int]:
    """The id each of `researcher_ids` was finally merged into (itself if never merged).

    The one walk of merge chains for every caller: one query per hop over all the ids at once,
    at most MAX_MERGE_HOPS. Unknown ids, and ids whose chain does not end (a cycle, or longer
    than MAX_MERGE_HOPS: data errors), are left out.
    """
    current = {rid: rid for rid in researcher_ids}
    survivors: dict[int, int] = {}
    for _ in range(MAX_MERGE_HOPS):
        if not current:
            break
        targets = dict(
            Researcher.objects.filter(pk__in=set(current.values())).values_list(
                "pk", "merged_into_id"
            )
        )
        following = {}
        for rid, at in current.items():
            if at not in targets:
                continue  # unknown id
            if targets[at] is None:
                survivors[rid] = at
            else:
                following[rid] = targets[at]
        current = following
    return survivors


def researcher_survivor_id(researcher_id: int) -> int | None:
    """The id that `researcher_id` was finally merged into (itself if never merged); None when
    the id is unknown or its chain does not end."""
    return researcher_survivor_ids([researcher_id]).get(researcher_id)


def researcher_curation_history(researcher: Researcher, *, limit: int = 20) -> list[CurationEntry]:
    """The latest curation entries that touched this record, for curators (one query)."""
    return list(
        researcher.curation_entries.select_related("actor").order_by("-created_at", "-pk")[:limit]
    )
