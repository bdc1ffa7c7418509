"""The citation graph's data: resolving cited works to archive papers, and loading edges
(papers.Citation) and what each source said of a paper (papers.CitationCoverage) in bulk.

The parsers (sources.citation_answers) return `CitedWork`s; `citations_load` writes them. The
same rows come from the API path (one paper's answer) and from bulk files (many papers' edges
at once): both end in `citations_load`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from django.db import connection, transaction
from django.db.models import Exists, F, Field, OuterRef
from django.db.models.functions import Lower

from papers.ingest.upsert import _columns, quote_name
from papers.models import Citation, CitationCoverage, Paper
from sources.citation_answers import (
    CitedWork,
    work_from_ids,
    work_key,
)
from wovepaper.lib.batches import chunked
from wovepaper.lib.pagecache import pages_changed

T = TypeVar("T")
# Rows per INSERT/COPY batch: bounds memory and the statement's size, not the transaction.
BATCH_SIZE = 5000


@dataclass(slots=True)
class CitingPaperEdges:
    """All the works one archive paper cites according to one source, read at one time: the
    unit that replaces that paper's earlier edges from that source."""

    citing_paper_id: int
    source: str
    fetched_at: datetime
    works: list[CitedWork]


Lookup = Callable[[list[str]], Iterable[tuple[int, str, str]]]


def _postgres_lookup(column: str) -> Lookup:
    """Papers whose `column` is one of the ids, joined to the ids as one array parameter: a
    few thousand ids in an IN list cost PostgreSQL more to plan than to find."""
    table = quote_name(Paper._meta.db_table)
    sql = (
        f"SELECT p.id, p.arxiv_id, wanted.id FROM {table} p "
        f"JOIN unnest(%s::text[]) AS wanted(id) ON {column} = wanted.id"
    )
    if column == "lower(p.doi)":
        # The partial index on lower(doi) serves only queries that exclude blank DOIs.
        sql += " WHERE p.doi <> ''"

    def lookup(ids: list[str]) -> Iterable[tuple[int, str, str]]:
        with connection.cursor() as cursor:
            cursor.execute(sql, [ids])
            return cursor.fetchall()

    return lookup


def _orm_lookup(kind: str) -> Lookup:
    def lookup(ids: list[str]) -> Iterable[tuple[int, str, str]]:
        papers = Paper.objects.all()
        if kind == "doi":
            papers = papers.exclude(doi="").annotate(value=Lower("doi"))
        else:
            papers = papers.annotate(value=F(_PAPER_COLUMNS[kind]))
        return papers.filter(value__in=ids).values_list("pk", "arxiv_id", "value")

    return lookup


_PAPER_COLUMNS = {
    "arxiv": "arxiv_id",
    "doi": "doi",
    "s2": "semantic_scholar_id",
    "openalex": "openalex_id",
}
_LOOKUPS_POSTGRES = {
    kind: _postgres_lookup("lower(p.doi)" if kind == "doi" else f"p.{column}")
    for kind, column in _PAPER_COLUMNS.items()
}
_LOOKUPS_ORM = {kind: _orm_lookup(kind) for kind in _PAPER_COLUMNS}


def works_resolve(works: Iterable[CitedWork]) -> list[tuple[int, str] | None]:
    """For each work, its archive paper as (id, arXiv id), or None: by arXiv id (version
    stripped), then DOI (the paper's own, usually the published version's), then Semantic
    Scholar id, then OpenAlex id. One query per kind of id per batch of BATCH_SIZE ids."""
    return [match[:2] if match else None for match in works_resolve_how(works)]


def works_resolve_how(works: Iterable[CitedWork]) -> list[tuple[int, str, str] | None]:
    """`works_resolve`, each archive paper with the kind of id that found it ("arxiv", "doi",
    "s2" or "openalex"), for measuring resolution per kind of id."""
    works = list(works)
    found: dict[str, dict[str, tuple[int, str]]] = {
        "arxiv": {},
        "doi": {},
        "s2": {},
        "openalex": {},
    }
    wanted = {
        "arxiv": sorted({w.arxiv_id for w in works if w.arxiv_id}),
        "doi": sorted({w.doi for w in works if w.doi}),
        "s2": sorted({w.s2_id for w in works if w.s2_id}),
        "openalex": sorted({w.openalex_id for w in works if w.openalex_id}),
    }
    lookups = _LOOKUPS_POSTGRES if connection.vendor == "postgresql" else _LOOKUPS_ORM
    for kind, ids in wanted.items():
        for chunk in chunked(ids, BATCH_SIZE):
            for pk, arxiv_id, value in lookups[kind](list(chunk)):
                found[kind][value] = (pk, arxiv_id)
    resolved: list[tuple[int, str, str] | None] = []
    for w in works:
        for kind, value in (
            ("arxiv", w.arxiv_id),
            ("doi", w.doi),
            ("s2", w.s2_id),
            ("openalex", w.openalex_id),
        ):
            if value and (paper := found[kind].get(value)):
                resolved.append((*paper, kind))
                break
        else:
            resolved.append(None)
    return resolved


COPY_FIELDS = [
    "citing_paper",
    "cited_key",
    "cited_paper",
    "cited_arxiv_id",
    "cited_doi",
    "cited_s2_id",
    "cited_openalex_id",
    "cited_title",
    "cited_year",
    "cited_citation_count",
    "source",
    "fetched_at",
    "is_influential",
    "intents",
    "contexts",
    "citing_published",
]


def citation_rows(edges: Sequence[CitingPaperEdges]) -> list[tuple]:
    """The Citation rows (in COPY_FIELDS order, JSON as Python lists) for these edges: cited
    works resolved, one row per (citing paper, cited work, source); a work named twice in one
    list keeps its first mention, a work with no id and no title is left out."""
    published = dict(
        Paper.objects.filter(pk__in={e.citing_paper_id for e in edges}).values_list(
            "pk", "published"
        )
    )
    works = [work for e in edges for work in e.works]
    resolved = iter(works_resolve(works))
    rows = []
    seen: set[tuple[int, str, str]] = set()
    for e in edges:
        for work in e.works:
            paper = next(resolved)
            key = work_key(work, paper[1] if paper else "")
            if not key or (e.citing_paper_id, key, e.source) in seen:
                continue
            seen.add((e.citing_paper_id, key, e.source))
            rows.append(
                (
                    e.citing_paper_id,
                    key,
                    paper[0] if paper else None,
                    work.arxiv_id,
                    work.doi[:255],
                    work.s2_id,
                    work.openalex_id,
                    work.title,
                    work.year,
                    work.citation_count,
                    e.source,
                    e.fetched_at,
                    work.is_influential,
                    work.intents,
                    work.contexts,
                    published.get(e.citing_paper_id),
                )
            )
    return rows


def citations_load(edges: Sequence[CitingPaperEdges]) -> int:
    """Replace, for each (citing paper, source) in `edges`, that paper's edges from that source
    by the given ones, in one transaction: a re-fetch leaves no duplicate and no edge the
    source no longer gives. Writes in batches (COPY on PostgreSQL). Idempotent. Returns the
    number of edges written."""
    rows = citation_rows(edges)
    table = quote_name(Citation._meta.db_table)
    with transaction.atomic():
        by_source: dict[str, set[int]] = {}
        for e in edges:
            by_source.setdefault(e.source, set()).add(e.citing_paper_id)
        dropped: set[int] = set()
        for source, paper_ids in by_source.items():
            for chunk in chunked(sorted(paper_ids), BATCH_SIZE):
                earlier = Citation.objects.filter(citing_paper_id__in=chunk, source=source)
                dropped.update(
                    earlier.exclude(cited_paper=None).values_list("cited_paper_id", flat=True)
                )
                earlier.delete()
        if connection.vendor == "postgresql":
            _rows_copy(table, rows)
        else:
            names = [_attname(name) for name in COPY_FIELDS]
            for start in range(0, len(rows), BATCH_SIZE):
                Citation.objects.bulk_create(
                    [
                        Citation(**dict(zip(names, row, strict=True)))
                        for row in rows[start : start + BATCH_SIZE]
                    ]
                )
        # Both ends' pages list these edges: the citing paper's references, the cited papers'
        # citing papers, those of the replaced edges included.
        citing = {e.citing_paper_id for e in edges}
        pages_changed("paper", sorted(citing | dropped | _cited_papers(rows)))
    return len(rows)


def _cited_papers(rows: Sequence[tuple]) -> set[int]:
    return {row[2] for row in rows if row[2] is not None}


def _attname(name: str) -> str:
    field = Citation._meta.get_field(name)
    assert isinstance(field, Field)
    return field.attname


# COPY's text format: backslash, newline, carriage return and tab are escaped, NULL is \\N.
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _copy_value(value: object) -> str:
    if value is None:
        return "\\N"
    if value is True or value is False:
        return "t" if value else "f"
    if isinstance(value, list):
        # Most edges have no intents and no contexts: skip the encoder for them.
        return json.dumps(value).translate(_COPY_ESCAPES) if value else "[]"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value).translate(_COPY_ESCAPES)


def copy_text(rows: Iterable[tuple]) -> Iterable[str]:
    """Rows in COPY_FIELDS order as lines of COPY's text format, JSON columns as JSON."""
    for row in rows:
        yield "\t".join(map(_copy_value, row)) + "\n"


def _rows_copy(table: str, rows: Sequence[tuple]) -> None:
    """COPY the rows in text format, written by us in large chunks: psycopg's write_row adapts
    value by value and cost more than the database's own work."""
    with connection.cursor() as cursor:
        with cursor.copy(f"COPY {table} ({_columns(Citation, COPY_FIELDS)}) FROM STDIN") as copy:
            lines = copy_text(rows)
            while chunk := "".join(itertools.islice(lines, 2000)):
                copy.write(chunk)


def citing_works_load(
    *, cited_paper_id: int, source: str, fetched_at: datetime, citing_works: Sequence[CitedWork]
) -> int:
    """Edges from a source's list of the works citing an archive paper (S2's `citations`):
    see `citing_works_add`. Returns the number of edges added (0 for an unknown paper)."""
    cited = (
        Paper.objects.filter(pk=cited_paper_id)
        .values("arxiv_id", "doi", "semantic_scholar_id", "openalex_id")
        .first()
    )
    if cited is None:
        return 0
    work = work_from_ids(
        arxiv=cited["arxiv_id"],
        doi=cited["doi"],
        s2_id=cited["semantic_scholar_id"],
        openalex=cited["openalex_id"],
    )
    return citing_works_add(
        cited=work, source=source, fetched_at=fetched_at, citing_works=citing_works
    )


def citing_works_add(
    *, cited: CitedWork, source: str, fetched_at: datetime, citing_works: Sequence[CitedWork]
) -> int:
    """Edges from a source's list of the works citing `cited` (an archive paper or not): those
    citing works that are archive papers get an edge to it, unless their own references from
    that source already hold one. Nothing is deleted, since such lists are capped (S2 gives at
    most 1,000) and a missing citing work is no evidence; nor is anything said of the citing
    papers' reference lists, which stay unfetched until their source is asked for them.
    Citing works outside the archive are not stored (see docs/citations.md). Idempotent.
    Returns the number of edges added."""
    resolved = works_resolve([cited])[0]
    # A list of citing works can name the cited paper itself (a preprint and its version).
    citing_papers = {
        paper
        for paper in works_resolve(citing_works)
        if paper and (resolved is None or paper[0] != resolved[0])
    }
    if not citing_papers:
        return 0
    key = work_key(cited, resolved[1] if resolved else "")
    published = dict(
        Paper.objects.filter(pk__in=[pk for pk, _ in citing_papers]).values_list("pk", "published")
    )
    new = [
        Citation(
            citing_paper_id=pk,
            cited_key=key,
            cited_paper_id=resolved[0] if resolved else None,
            cited_arxiv_id=cited.arxiv_id,
            cited_doi=cited.doi[:255],
            cited_s2_id=cited.s2_id,
            cited_openalex_id=cited.openalex_id,
            cited_title=cited.title,
            cited_year=cited.year,
            cited_citation_count=cited.citation_count,
            source=source,
            fetched_at=fetched_at,
            citing_published=published.get(pk),
        )
        for pk, _ in sorted(citing_papers)
    ]
    edges = Citation.objects.filter(
        cited_key=key, source=source, citing_paper_id__in=list(published)
    )
    before = edges.count()
    Citation.objects.bulk_create(new, batch_size=BATCH_SIZE, ignore_conflicts=True)
    added = edges.count() - before
    if added:
        pages_changed("paper", sorted({*published, *([resolved[0]] if resolved else [])}))
    return added


@dataclass(slots=True)
class Coverage:
    """What a source answered for one paper's citations at one time (CitationCoverage)."""

    paper_id: int
    source: str
    fetched_at: datetime
    known: bool
    references_listed: int | None = None
    cited_by_count: int | None = None
    counts_by_year: list[list[int]] = field(default_factory=list)
    references_detailed_at: datetime | None = None


def citation_coverage_record(coverages: Sequence[Coverage]) -> None:
    """Record what each source said of each paper, replacing what it said before. Idempotent."""
    CitationCoverage.objects.bulk_create(
        [
            CitationCoverage(
                paper_id=c.paper_id,
                source=c.source,
                fetched_at=c.fetched_at,
                known=c.known,
                references_listed=c.references_listed,
                cited_by_count=c.cited_by_count,
                counts_by_year=c.counts_by_year,
                references_detailed_at=c.references_detailed_at,
            )
            for c in coverages
        ],
        batch_size=BATCH_SIZE,
        update_conflicts=True,
        unique_fields=["paper", "source"],
        update_fields=[
            "fetched_at",
            "known",
            "references_listed",
            "cited_by_count",
            "counts_by_year",
            "references_detailed_at",
        ],
    )
    pages_changed("paper", sorted({c.paper_id for c in coverages}))


def papers_citations_due(*, limit: int, source: str, stale_before: datetime) -> list[int]:
    """Up to `limit` papers to ask `source` for citations: those never asked, newest first,
    then those asked before `stale_before`, longest ago first. Two bounded queries, each
    served by an index (the papers' date index with an anti-join on the coverage's key; the
    coverage's (source, fetched_at) index)."""
    asked = CitationCoverage.objects.filter(source=source, paper_id=OuterRef("pk"))
    never = list(
        Paper.objects.filter(~Exists(asked), is_deleted=False)
        .order_by("-published", "-id")
        .values_list("pk", flat=True)[:limit]
    )
    if len(never) >= limit:
        return never
    stale = CitationCoverage.objects.filter(source=source, fetched_at__lt=stale_before).order_by(
        "fetched_at"
    )
    return never + list(stale.values_list("paper_id", flat=True)[: limit - len(never)])
