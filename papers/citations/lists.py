"""Reads of the citation graph for pages and the API: a paper's references and the archive's
papers citing it, paged and sorted, with what each source said of them and when.

Every function is a bounded number of queries whatever a paper's citation count: lists are
cut with LIMIT/OFFSET (or a keyset), counts are one aggregate each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Case, Count, F, Max, Q, QuerySet, Value, When

from ..models import CITATION_SOURCES, Authorship, Citation, CitationCoverage, Paper

SORTS = ("date", "citations")
# Semantic Scholar first when both sources list a paper's references: its entries carry titles,
# years and ids; OpenAlex's only ids.
SOURCE_ORDER = ("s2", "openalex")


@dataclass
class SourceReferences:
    """One source's reference list of a paper: how many edges are held, and what the source
    said when asked (None: never asked; the edges then come from other papers' lists)."""

    source: str
    held: int
    coverage: CitationCoverage | None
    latest: datetime | None = None  # the newest of the held edges' fetch times
    # Edges with a year or a count: with none, the two sorts give one order.
    sortable: int = 0

    @property
    def name(self) -> str:
        return CITATION_SOURCES.get(self.source, self.source)

    @property
    def fetched_at(self) -> datetime | None:
        return self.coverage.fetched_at if self.coverage else self.latest

    @property
    def lists_none(self) -> bool:
        """The source was asked and lists no reference for the paper."""
        return bool(self.coverage and self.coverage.known and not self.held)


@dataclass
class References:
    """What is known of a paper's references, by source, and which source's list is shown."""

    by_source: list[SourceReferences]
    shown: SourceReferences | None

    @property
    def count(self) -> int:
        return self.shown.held if self.shown else 0

    @property
    def others(self) -> list[SourceReferences]:
        return [s for s in self.by_source if s is not self.shown]


@dataclass
class CitedBy:
    """The archive's papers citing a paper: how many, from which sources and as of when, and
    the sources' own count of all citing works (`Paper.cited_by_count`)."""

    in_archive: int
    sources: list[tuple[str, datetime]] = field(default_factory=list)  # (source name, latest)


# A work the source names by an id alone: listed last, in one line, on the pages.
UNTITLED = Q(cited_paper__isnull=True, cited_title="")


def _sort_order(sort: str, *, year: str, count: str) -> list[Any]:
    # Where the source gives neither (OpenAlex), the archive's papers come first; works known
    # by an id alone come last whatever the sort.
    untitled_last = Case(When(UNTITLED, then=Value(1)), default=Value(0))
    archive_first = F("cited_paper").asc(nulls_last=True)
    if sort == "citations":
        keys = [F(count).desc(nulls_last=True), F(year).desc(nulls_last=True)]
    else:
        keys = [F(year).desc(nulls_last=True), F(count).desc(nulls_last=True)]
    return [untitled_last, *keys, archive_first, "id"]


def paper_references(paper: Paper, *, source: str | None = None) -> References:
    """Each source's reference list of `paper` (two queries), and the one to show: `source` if
    it has one, else the first of SOURCE_ORDER that holds edges, else that was asked."""
    held = {
        row["source"]: (row["n"], row["latest"], row["sortable"])
        for row in Citation.objects.filter(citing_paper=paper)
        .values("source")
        .annotate(
            n=Count("id"),
            latest=Max("fetched_at"),
            sortable=Count(
                "id", filter=Q(cited_year__isnull=False) | Q(cited_citation_count__isnull=False)
            ),
        )
        .order_by("source")
    }
    coverage = {c.source: c for c in CitationCoverage.objects.filter(paper=paper)}
    sources = sorted(
        set(held) | {s for s, c in coverage.items() if c.known},
        key=lambda s: (SOURCE_ORDER.index(s) if s in SOURCE_ORDER else len(SOURCE_ORDER), s),
    )
    by_source = [
        SourceReferences(
            s,
            held.get(s, (0, None, 0))[0],
            coverage.get(s),
            held.get(s, (0, None, 0))[1],
            held.get(s, (0, None, 0))[2],
        )
        for s in sources
    ]
    shown = next((s for s in by_source if s.source == source), None)
    shown = shown or next((s for s in by_source if s.held), None)
    return References(by_source=by_source, shown=shown or (by_source[0] if by_source else None))


def references_query(paper: Paper, source: str, sort: str) -> QuerySet[Citation]:
    """`paper`'s references from `source`, newest or most cited first, by what the source said
    of each (its year, its count). Read from the edges alone, the archive papers fetched for
    the page only (prefetch): a join here let PostgreSQL hash the whole paper table."""
    return (
        Citation.objects.filter(citing_paper=paper, source=source)
        .prefetch_related("cited_paper")
        .order_by(*_sort_order(sort, year="cited_year", count="cited_citation_count"))
    )


def paper_cited_by(paper: Paper) -> CitedBy:
    """How many archive papers cite `paper`, and which sources said so, as of when (one query:
    the edges to it, grouped by source, on the cited-by index)."""
    rows = list(
        Citation.objects.filter(cited_paper=paper)
        .values("source")
        .annotate(papers=Count("citing_paper", distinct=True), latest=Max("fetched_at"))
        .order_by("source")
    )
    if not rows:
        return CitedBy(in_archive=0)
    in_archive = (
        rows[0]["papers"]
        if len(rows) == 1
        else Citation.objects.filter(cited_paper=paper).values("citing_paper").distinct().count()
    )
    return CitedBy(
        in_archive=in_archive,
        sources=[(CITATION_SOURCES.get(r["source"], r["source"]), r["latest"]) for r in rows],
    )


def references_page(
    paper: Paper, *, source: str, sort: str, offset: int, limit: int
) -> list[Citation]:
    """One page of `paper`'s references from `source` (two queries: the edges, their archive
    papers), each with `year` and `count` to show: the source's, else the archive paper's."""
    edges = list(references_query(paper, source, sort)[offset : offset + limit])
    for edge in edges:
        cited = edge.cited_paper
        edge.year = edge.cited_year or (  # type: ignore[attr-defined]
            cited.published.year if cited is not None and cited.published else None
        )
        edge.count = (  # type: ignore[attr-defined]
            edge.cited_citation_count
            if edge.cited_citation_count is not None
            else (cited.cited_by_count if cited is not None else None)
        )
    return edges


def citing_paper_ids(paper: Paper, *, sort: str, offset: int, limit: int) -> list[int]:
    """A page of the ids of the archive's papers citing `paper`, each once whichever sources
    said so, newest or most cited first. Driven from the cited-by index: the work is bounded
    by the paper's citations, never by the archive (ordering the papers table and testing each
    row against the citing set walked the whole table for an old, much-cited paper)."""
    edges = Citation.objects.filter(cited_paper=paper).values("citing_paper_id")
    rows: Any
    if sort == "citations":
        rows = edges.annotate(
            count=Max("citing_paper__cited_by_count"), published=Max("citing_published")
        ).order_by(
            F("count").desc(nulls_last=True),
            F("published").desc(nulls_last=True),
            "-citing_paper_id",
        )
    else:
        rows = edges.annotate(published=Max("citing_published")).order_by(
            F("published").desc(nulls_last=True), "-citing_paper_id"
        )
    return [row["citing_paper_id"] for row in rows[offset : offset + limit]]


def _in_order(papers: QuerySet[Paper], ids: list[int]) -> list[Paper]:
    found = {p.pk: p for p in papers.filter(pk__in=ids, is_deleted=False)}
    return [found[pk] for pk in ids if pk in found]


def citing_papers(paper: Paper, *, sort: str, offset: int, limit: int) -> list[Paper]:
    """A page of the archive's papers citing `paper` (two queries: the ids, the papers)."""
    return _in_order(
        Paper.objects.all(), citing_paper_ids(paper, sort=sort, offset=offset, limit=limit)
    )


@dataclass
class CitingPaper:
    """A paper citing the page's paper, with what the sources said of that citation."""

    paper: Paper
    sources: list[str]
    is_influential: bool | None
    contexts: list[str]


def citing_papers_page(paper: Paper, *, sort: str, offset: int, limit: int) -> list[CitingPaper]:
    """One page of the archive's papers citing `paper` (three queries: the ids, the papers,
    their edges)."""
    papers = citing_papers(paper, sort=sort, offset=offset, limit=limit)
    edges: dict[int, list[Citation]] = {}
    for edge in Citation.objects.filter(
        cited_paper=paper, citing_paper_id__in=[p.pk for p in papers]
    ).only("citing_paper_id", "source", "is_influential", "contexts"):
        edges.setdefault(edge.citing_paper_id, []).append(edge)
    page = []
    for p in papers:
        said = edges.get(p.pk, [])
        flags = [e.is_influential for e in said if e.is_influential is not None]
        page.append(
            CitingPaper(
                paper=p,
                sources=sorted(CITATION_SOURCES.get(e.source, e.source) for e in said),
                is_influential=any(flags) if flags else None,
                contexts=[c for e in said for c in e.contexts],
            )
        )
    return page


@dataclass
class CitationsPerYear:
    """OpenAlex's citations per year summed over an author's papers, for a small chart."""

    years: list[dict]  # {"year", "count", "pct"}, oldest first; pct of the highest year
    papers: int  # papers whose counts are known
    first_fetched: datetime | None = None
    last_fetched: datetime | None = None


def author_citations_per_year(researcher_id: int) -> CitationsPerYear:
    """The sum of OpenAlex's `counts_by_year` over the researcher's papers it was asked for
    (one query over their papers' coverage rows)."""
    rows = CitationCoverage.objects.filter(
        source="openalex", known=True, paper__authorships__researcher_id=researcher_id
    ).values_list("paper_id", "counts_by_year", "fetched_at")
    totals: dict[int, int] = {}
    seen: set[int] = set()
    fetched = []
    for paper_id, counts, fetched_at in rows:
        if paper_id in seen:  # one person at two positions of a paper
            continue
        seen.add(paper_id)
        fetched.append(fetched_at)
        for year, count in counts or []:
            totals[year] = totals.get(year, 0) + count
    top = max(totals.values(), default=0) or 1
    years = [
        {"year": year, "count": totals[year], "pct": round(100 * totals[year] / top)}
        for year in sorted(totals)
    ]
    return CitationsPerYear(
        years=years,
        papers=len(seen),
        first_fetched=min(fetched, default=None),
        last_fetched=max(fetched, default=None),
    )


@dataclass
class CitedWithinArchive:
    citing_papers: int
    recent: list[Citation]  # the newest edges, citing and cited paper joined


def author_cited_within_archive(researcher_id: int, *, limit: int = 5) -> CitedWithinArchive:
    """How many archive papers cite the researcher's papers, and the newest such citations
    (two queries, from the cited-by index through their papers)."""
    edges = Citation.objects.filter(cited_paper__authorships__researcher_id=researcher_id)
    count = edges.values("citing_paper").distinct().count()
    recent = list(
        edges.select_related("citing_paper", "cited_paper").order_by(
            F("citing_published").desc(nulls_last=True), "-id"
        )[:limit]
        if count
        else []
    )
    return CitedWithinArchive(citing_papers=count, recent=recent)


@dataclass
class CitationAlert:
    """A paper citing a followed researcher's paper: what cites what, and whose it is."""

    citing: Paper
    cited: Paper
    researchers: list[str]  # the followed authors of the cited paper, in byline order
    sources: list[str]


def citations_of_researchers(
    researcher_ids: list[int], *, since: datetime | None = None, limit: int = 10
) -> list[CitationAlert]:
    """The newest archive papers citing a paper by one of these researchers (first-version date
    after `since`, if given), each naming the cited paper and its followed authors. Three
    queries: the edges (newest first on the cited-by index), their papers, the authors."""
    if not researcher_ids:
        return []
    theirs = Authorship.objects.filter(researcher_id__in=researcher_ids).values("paper_id")
    edges = Citation.objects.filter(cited_paper__in=theirs, citing_published__isnull=False)
    if since is not None:
        edges = edges.filter(citing_published__gt=since)
    rows = list(
        edges.order_by("-citing_published", "citing_paper_id", "cited_paper_id").values_list(
            "citing_paper_id", "cited_paper_id", "source"
        )[: limit * 4]
    )
    pairs: dict[tuple[int, int], list[str]] = {}
    for citing_id, cited_id, source in rows:
        if (citing_id, cited_id) in pairs or len(pairs) < limit:
            pairs.setdefault((citing_id, cited_id), []).append(CITATION_SOURCES.get(source, source))
    if not pairs:
        return []
    papers = Paper.objects.in_bulk({pk for pair in pairs for pk in pair})
    names: dict[int, list[str]] = {}
    for paper_id, name in (
        Authorship.objects.filter(
            paper_id__in={cited for _, cited in pairs}, researcher_id__in=researcher_ids
        )
        .order_by("paper_id", "position")
        .values_list("paper_id", "researcher__display_name")
    ):
        if name not in names.setdefault(paper_id, []):
            names[paper_id].append(name)
    return [
        CitationAlert(
            citing=papers[citing],
            cited=papers[cited],
            researchers=names.get(cited, []),
            sources=sorted(set(sources)),
        )
        for (citing, cited), sources in pairs.items()
        if citing in papers and cited in papers
    ]


def citing_paper_ids_of_researcher(researcher_id: int, *, limit: int) -> list[int]:
    """The newest archive papers citing any paper of the researcher, each once (one query,
    from the cited-by index through their papers: bounded by their citations)."""
    theirs = Authorship.objects.filter(researcher_id=researcher_id).values("paper_id")
    rows = (
        Citation.objects.filter(cited_paper__in=theirs)
        .exclude(citing_paper__in=theirs)  # their own papers citing each other are not news
        .values("citing_paper_id")
        .annotate(published=Max("citing_published"))
        .order_by(F("published").desc(nulls_last=True), "-citing_paper_id")
    )
    return [row["citing_paper_id"] for row in rows[:limit]]
