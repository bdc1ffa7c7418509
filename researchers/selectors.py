"""Reads for researcher pages and lists. Every function runs a fixed number of queries: the page
figures are stored on Researcher by matching, never aggregated over authorships here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from institutions.models import AuthorshipInstitution, Institution
from papers.models import MATCH_CERTAIN, Authorship, Paper, PaperCategory
from papers.selectors import listed, papers_with_short_bylines
from wovepaper.lib.search import given_name_initials

from .models import (
    CurationEntry,
    InstitutionResearcher,
    PaperMatchState,
    PinnedAuthorship,
    Researcher,
    ResearcherExternalId,
)
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
# The API's order for researcher lists, the pages' default.
RESEARCHER_ORDERING = LIST_SORTS["papers"]
# Name searches shorter than this (folded) find nobody: one letter would match most names.
NAME_SEARCH_MIN = 2

EXTERNAL_URLS = {
    ResearcherExternalId.SEMANTIC_SCHOLAR: "https://www.semanticscholar.org/author/{}",
    ResearcherExternalId.OPENALEX: "https://openalex.org/{}",
    ResearcherExternalId.ORCID: "https://orcid.org/{}",
}


def researchers_listed() -> QuerySet[Researcher]:
    """Live records (merged ones excluded), unordered."""
    return Researcher.objects.filter(merged_into__isnull=True, is_person=True)


def researchers_public() -> QuerySet[Researcher]:
    """Live records that the researcher lists and search show: not those their owner hid (the
    page, its papers and the bylines stay public)."""
    return researchers_listed().filter(hidden=False)


def researcher_get(pk: int) -> Researcher | None:
    """The record `pk`, merged or not, with what the API's detail shows (two queries)."""
    return (
        Researcher.objects.select_related("most_cited_paper")
        .prefetch_related("external_ids")
        .filter(pk=pk)
        .first()
    )


def researcher_merge_and_name(pk: int) -> tuple[int | None, str] | None:
    """(merged_into id, name_key) of the record `pk`, None when there is none (one query)."""
    return Researcher.objects.filter(pk=pk).values_list("merged_into_id", "name_key").first()


def researchers_named(text: str) -> QuerySet[Researcher]:
    """Live researchers whose name key holds each folded word of `text` (a trigram index on
    PostgreSQL), unordered; nobody for fewer than NAME_SEARCH_MIN characters. The search
    pages' database backend (researchers.name_search) and the API's search both read this."""
    key = name_key(text or "")
    if len(key) < NAME_SEARCH_MIN:
        return Researcher.objects.none()
    words = key.split()
    condition = Q()
    for word, initial in zip(words, given_name_initials(words), strict=True):
        matches = Q(name_key__contains=word)
        if initial:  # "ian sommerville" also finds the byline "I. Sommerville" ("i sommerville")
            matches |= Q(name_key__startswith=f"{initial} ") | Q(name_key__contains=f" {initial} ")
        condition &= matches
    return researchers_public().filter(condition)


def researchers_sharing_name(name: str, *, exclude: int) -> QuerySet[Researcher]:
    """Other live records with the name key `name` than `exclude`, unordered."""
    if not name:
        return Researcher.objects.none()
    return researchers_listed().filter(name_key=name).exclude(pk=exclude)


def researchers_linked_to_institution(institution: Institution) -> QuerySet[Researcher]:
    """Listed researchers with at least one author listing at the institution, unordered: the
    stored list the institution's page pages through (researchers.institution_members)."""
    members = InstitutionResearcher.objects.filter(institution=institution)
    return researchers_public().filter(pk__in=members.values("researcher_id"))


def researcher_resolve(pk: int) -> tuple[Researcher | None, bool]:
    """The record for `pk`, following `merged_into` to the final survivor.

    Returns (researcher, was_merged). One query for a record that was never merged; for a merged
    one, one per hop and one for the survivor. A chain that does not end (a data error) shows
    the record asked for.
    """
    records = Researcher.objects.select_related("most_cited_paper", "current_institution")
    researcher = records.filter(pk=pk).first()
    if researcher is None or researcher.merged_into_id is None:
        return researcher, False
    survivor = researcher_survivor_ids([researcher.merged_into_id]).get(researcher.merged_into_id)
    if survivor is None or survivor == pk:
        return researcher, False
    return records.filter(pk=survivor).first(), True


def researcher_same_name(researcher: Researcher, *, limit: int = 8) -> list[Researcher]:
    """Other live records with the same name key: other people, or unmerged duplicates."""
    same = researchers_sharing_name(researcher.name_key, exclude=researcher.pk)
    return list(same.order_by(*RESEARCHER_ORDERING)[:limit])


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
    papers = listed(Paper.objects.filter(authorships__researcher=researcher))
    if category:
        papers = papers.filter(
            Q(categories=category)
            | Q(categories__startswith=f"{category} ")
            | Q(categories__endswith=f" {category}")
            | Q(categories__contains=f" {category} ")
        )
    papers = papers.order_by(*PAPER_SORTS.get(sort, PAPER_SORTS["newest"]))
    rows = papers[offset : offset + limit]
    # One person matched at two positions of a paper (a curation slip) would repeat a row;
    # dropping it here is cheaper than DISTINCT over whole paper rows.
    unique = {paper.pk: paper for paper in rows}.values()
    return papers_with_short_bylines(unique, focus_ids=[researcher.pk])


def researcher_papers_for_citation(researcher: Researcher, *, limit: int) -> list[Paper]:
    """Up to `limit` of the researcher's papers, newest first, without their bylines (the
    citation export reads names itself): one query, from the (researcher, paper) index."""
    rows = Paper.objects.filter(authorships__researcher=researcher, is_deleted=False).order_by(
        *PAPER_SORTS["newest"]
    )[:limit]
    return list({paper.pk: paper for paper in rows}.values())


def researcher_citation_export(researcher: Researcher, *, limit: int) -> tuple[list[Paper], str]:
    """The papers of a researcher's citation export (site and API), newest first, and the note
    that says the export was cut at `limit` (empty when it holds them all)."""
    papers = researcher_papers_for_citation(researcher, limit=limit + 1)
    if len(papers) <= limit:
        return papers, ""
    return papers[:limit], (
        f"The newest {limit} papers of {researcher.display_name}; "
        "older ones are not in this export."
    )


def researchers_active_in_category(
    code: str, *, recent: int = 300, byline_head: int = 50, limit: int = 10
) -> list[tuple[Researcher, int]]:
    """The researchers with most papers among the `recent` newest papers of an arXiv category,
    with that count, most first.

    Three queries whatever the size of the field: the newest papers through the (code,
    -published) index, their matched authors counted in the database, and those researchers.
    Only the first `byline_head` names of a byline count, so that one collaboration paper's
    hundreds of authors neither crowd out the field nor make the count slow.
    """
    paper_ids = list(
        PaperCategory.objects.filter(code=code)
        .order_by("-published", "-paper_id")
        .values_list("paper_id", flat=True)[:recent]
    )
    counts = list(
        Authorship.objects.filter(
            paper_id__in=paper_ids, researcher__isnull=False, position__lte=byline_head
        )
        .values("researcher_id")
        .annotate(n=Count("paper_id", distinct=True))
        .order_by("-n", "researcher_id")
        .values_list("researcher_id", "n")[: limit * 2]
    )
    live = Researcher.objects.filter(
        pk__in=[rid for rid, _ in counts], merged_into__isnull=True, is_person=True, hidden=False
    ).in_bulk()
    return [(live[rid], n) for rid, n in counts if rid in live][:limit]


def researchers_browse(
    *, sort: str = "papers", offset: int = 0, limit: int = 50
) -> list[Researcher]:
    qs = researchers_public()
    if sort == "h_index":
        # Rows without an h-index would sort first in a descending index scan; leave them out.
        qs = qs.filter(h_index__isnull=False)
    return list(qs.order_by(*LIST_SORTS.get(sort, LIST_SORTS["papers"]))[offset : offset + limit])


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


# Matching's reads (researchers.matching)


def papers_waiting_count(*, since: datetime | None = None, now: datetime | None = None) -> int:
    """How many papers the backlog (`researchers.matching.backlog`) holds: never tried, or due
    for a retry. A count over the whole table: for commands, not for each batch."""
    now = now or timezone.now()
    never = Paper.objects.filter(match_state__isnull=True)
    due = PaperMatchState.objects.filter(next_attempt_at__lte=now)
    if since:
        never = never.filter(published__gte=since)
        due = due.filter(published__gte=since)
    return never.count() + due.count()


def papers_for_matching(paper_ids: Iterable[int]) -> list[Paper]:
    """The papers of a batch, newest first, with only what matching reads."""
    return list(
        Paper.objects.filter(pk__in=list(paper_ids))
        .only("pk", "arxiv_id", "published")
        .order_by("-published", "-pk")
    )


def authorships_for_matching(paper_ids: Sequence[int]) -> dict[int, list[Authorship]]:
    """Each paper's byline, in order, with only what matching reads and writes (one query)."""
    by_paper: dict[int, list[Authorship]] = {}
    for authorship in (
        Authorship.objects.filter(paper_id__in=paper_ids)
        .only(
            "pk",
            "paper_id",
            "position",
            "name",
            "researcher_id",
            "matched_at",
            "match_method",
            "match_confidence",
        )
        .order_by("paper_id", "position")
    ):
        by_paper.setdefault(authorship.paper_id, []).append(authorship)
    return by_paper


def researcher_ids_by_external_id(
    values: Mapping[str, Iterable[str]],
) -> list[tuple[str, str, int]]:
    """(source, value, researcher id) of the records holding any of these ids, by source (one
    query). The records may be merged ones: see `researcher_survivor_ids`."""
    query = Q(pk__in=[])
    for source, vals in values.items():
        wanted = set(vals)
        if wanted:
            query |= Q(source=source, value__in=wanted)
    return list(
        ResearcherExternalId.objects.filter(query).values_list("source", "value", "researcher_id")
    )


def researcher_external_ids_held(researcher_ids: Iterable[int]) -> list[tuple[int, str, str]]:
    """(researcher id, source, value) of every id these records hold (one query)."""
    return list(
        ResearcherExternalId.objects.filter(researcher_id__in=set(researcher_ids)).values_list(
            "researcher_id", "source", "value"
        )
    )


def pinned_authorship_ids(authorship_ids: Iterable[int]) -> set[int]:
    """Those of these authorships a curator attributed by hand (one query)."""
    return set(
        PinnedAuthorship.objects.filter(authorship_id__in=list(authorship_ids)).values_list(
            "authorship_id", flat=True
        )
    )


def researchers_without_figures(researcher_ids: Iterable[int]) -> list[int]:
    """Those of these records whose figures were never fetched (one query)."""
    return list(
        Researcher.objects.filter(
            pk__in=set(researcher_ids), figures_updated_at__isnull=True
        ).values_list("pk", flat=True)
    )


@dataclass
class UncertainLink:
    """One uncertain link in the curators' queue, with what a curator decides it on."""

    authorship: Authorship
    # The byline names either side, each with the record it is linked to (or None): a link
    # made on its slot stands or falls with its neighbours.
    before: Authorship | None
    after: Authorship | None
    # What each source calls the record: (source label, id, the source's own name).
    source_names: list[tuple[str, str, str]]

    @property
    def neighbours(self) -> list[Authorship]:
        return [n for n in (self.before, self.after) if n is not None]


def uncertain_links(*, limit: int = 50, offset: int = 0) -> tuple[list[UncertainLink], int]:
    """The linked byline names below Authorship's certain confidence, least sure first, read
    through the partial index of those rows; and how many there are. Four queries a page."""
    rows = Authorship.objects.filter(
        match_confidence__lt=MATCH_CERTAIN, researcher__isnull=False
    ).order_by("match_confidence", "pk")
    total = rows.count()
    page = list(
        rows.select_related("paper", "researcher").prefetch_related("researcher__external_ids")[
            offset : offset + limit
        ]
    )
    if not page:
        return [], total
    wanted = Q()
    for a in page:
        wanted |= Q(paper_id=a.paper_id, position__in=[a.position - 1, a.position + 1])
    neighbours = {
        (n.paper_id, n.position): n
        for n in Authorship.objects.filter(wanted).select_related("researcher")
    }
    return [
        UncertainLink(
            authorship=a,
            before=neighbours.get((a.paper_id, a.position - 1)),
            after=neighbours.get((a.paper_id, a.position + 1)),
            source_names=[
                (e.get_source_display(), e.value, e.name)
                for e in a.researcher.external_ids.all()  # type: ignore[union-attr]
            ],
        )
        for a in page
    ], total


@dataclass(frozen=True)
class LatestAffiliation:
    """Where a researcher's newest paper with a known affiliation says they were."""

    institutions: list[Institution]
    paper: Paper


def researcher_latest_affiliation(researcher: Researcher) -> LatestAffiliation | None:
    """The institutions listed on the researcher's newest paper that lists any (OpenAlex's
    affiliations of that byline), or None when no paper of theirs lists one. One query, bounded
    by the researcher's own papers."""
    links = list(
        AuthorshipInstitution.objects.filter(authorship__researcher_id=researcher.pk)
        .select_related("institution", "paper")
        .order_by("-paper__published", "-paper_id", "institution__name")[:10]
    )
    if not links:
        return None
    newest = links[0].paper
    at = [link.institution for link in links if link.paper_id == newest.pk]
    return LatestAffiliation(institutions=at, paper=newest)
