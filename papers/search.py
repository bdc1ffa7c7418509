"""Keyword search over papers: one interface, a backend per database vendor.

PostgreSQL uses full-text search over each paper's weighted tsvector document with a GIN index
(PaperSearchDocument, built by papers.indexing); SQLite uses an FTS5 table kept in step by
triggers. Both rank, filter by category and date, and page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from django.db import connection

from .models import Paper

PG_VECTOR = "d.document"
# Counting every match of a very common word is the slow part of a search; past this many we
# say "more than" instead of counting on.
COUNT_CAP = 10_000


@dataclass
class PaperSearchResult:
    papers: list[Paper] = field(default_factory=list)
    total: int = 0
    total_is_capped: bool = False


_WORD = re.compile(r"[\w][\w.\-+']*", re.UNICODE)


def fts5_query(text: str) -> str:
    """Quote each word for FTS5 so user input can never be read as FTS5 syntax."""
    words = _WORD.findall(text)
    return " ".join('"' + w.replace('"', '""') + '"' for w in words[:32])


def _filters(category: str | None, date_from: date | None, date_to: date | None):
    clauses, params = [], []
    if category:
        clauses.append(
            "EXISTS (SELECT 1 FROM papers_papercategory c WHERE c.paper_id = p.id AND c.code = %s)"
        )
        params.append(category)
    if date_from:
        clauses.append("p.published >= %s")
        params.append(date_from)
    if date_to:
        clauses.append("p.published < %s")
        params.append(date_to)
    return clauses, params


def paper_search(
    query: str,
    *,
    category: str | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
    sort: str = "relevance",
    offset: int = 0,
    limit: int = 20,
) -> PaperSearchResult:
    """Ranked keyword search. `date_to` is exclusive. At most three queries whatever the data
    size: the (capped) count first, since how many papers match decides how to fetch them."""
    query = (query or "").strip()
    if not query:
        return PaperSearchResult()
    if connection.vendor == "postgresql":
        match = f"{PG_VECTOR} @@ websearch_to_tsquery('english', %s)"
        rank = f"ts_rank_cd({PG_VECTOR}, websearch_to_tsquery('english', %s))"
        match_params: list = [query]
        rank_params: list = [query]
        source = "papers_papersearchdocument d JOIN papers_paper p ON p.id = d.paper_id"
    elif connection.vendor == "sqlite":
        fts = fts5_query(query)
        if not fts:
            return PaperSearchResult()
        source = "papers_paper_fts f JOIN papers_paper p ON p.id = f.rowid"
        match = "papers_paper_fts MATCH %s"
        # bm25 is lower for better matches; negate so that both vendors sort rank descending.
        rank = "-bm25(papers_paper_fts, 10.0, 1.0)"
        match_params, rank_params = [fts], []
    else:  # pragma: no cover - other vendors are not supported
        raise NotImplementedError(f"no search backend for {connection.vendor}")

    clauses, filter_params = _filters(category, date_from, date_to)
    where = " AND ".join([match, *clauses])
    order = {
        "relevance": "rank DESC, p.published DESC",
        "newest": "p.published DESC, p.id DESC",
        "oldest": "p.published ASC, p.id ASC",
        "cited": "p.cited_by_count DESC NULLS LAST, rank DESC"
        if connection.vendor == "postgresql"
        else "p.cited_by_count IS NULL, p.cited_by_count DESC, rank DESC",
    }.get(sort, "rank DESC, p.published DESC")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {source} WHERE {where} LIMIT %s) AS hits",
            [*match_params, *filter_params, COUNT_CAP + 1],
        )
        total = cursor.fetchone()[0]
        ids: list[int] = []
        if total:
            select = f"SELECT p.id, {rank} AS rank FROM {source} WHERE {where}"
            if connection.vendor == "postgresql" and total <= COUNT_CAP:
                # Few matches: take them all from the GIN index, then sort. Left to itself the
                # planner may walk every paper by date hoping to meet 20 matches soon, which
                # for a rare word is a scan of the whole table (1.5 s at 1M papers).
                select = (
                    f"WITH p AS MATERIALIZED ("
                    f"SELECT p.id, p.published, p.cited_by_count, {rank} AS rank "
                    f"FROM {source} WHERE {where}) SELECT p.id, p.rank FROM p"
                )
            cursor.execute(
                f"{select} ORDER BY {order} LIMIT %s OFFSET %s",
                [*rank_params, *match_params, *filter_params, limit, offset],
            )
            ids = [row[0] for row in cursor.fetchall()]
    by_id = Paper.objects.in_bulk(ids)
    return PaperSearchResult(
        papers=[by_id[i] for i in ids if i in by_id],
        total=min(total, COUNT_CAP),
        total_is_capped=total > COUNT_CAP,
    )
