"""Paper search in the database itself, when no engine is configured: SQLite FTS5 (the
embedded default, an FTS5 table kept by triggers) and PostgreSQL full text (a fallback, over
the weighted documents papers.search.postgres_documents builds, GIN-indexed).

PostgreSQL cannot rank the matches of a common word without scoring every one of them (242k
papers for "quantum" at 1M: 1-2 s), so past COUNT_CAP matches it ranks a bounded pool, the
first COUNT_CAP matches the index yields, and says so: the page is `approximate` and the total
"more than". Date orders stay exact at any size, since the planner walks the date index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection, transaction

from wovepaper.lib.search import Range, SearchBackend, SearchPage, SearchQuery, Term
from wovepaper.lib.search.base import Clause, held_by_parts, parse_text

from ..models import PaperSearchDocument

PG_VECTOR = "d.document"
# Counting every match of a very common word is the slow part of a search; past this many we
# say "more than" instead of counting on, and rank this many candidates at most.
COUNT_CAP = 10_000


def fts5_query(text: str) -> str:
    """Quote each word (and each phrase) for FTS5 so user input is never read as syntax."""
    return _fts5(parse_text(text))


def _fts5(clauses: list[Clause], *, any_word: bool = False) -> str:
    quoted = ['"' + " ".join(clause.words).replace('"', '""') + '"' for clause in clauses]
    return (" OR " if any_word else " ").join(quoted)


def pg_tsquery_text(clauses: list[Clause], *, any_word: bool = False) -> str:
    """The same clauses for websearch_to_tsquery: words, and phrases in double quotes; `or`
    between them for any one of them."""
    parts = [f'"{" ".join(c.words)}"' if c.is_phrase else c.words[0] for c in clauses]
    return (" or " if any_word else " ").join(parts)


def _filters(query: SearchQuery) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for condition in query.filters:
        if isinstance(condition, Term) and condition.field == "categories":
            clauses.append(
                "EXISTS (SELECT 1 FROM papers_papercategory c "
                "WHERE c.paper_id = p.id AND c.code = %s)"
            )
            params.append(condition.value)
        elif isinstance(condition, Range) and condition.field == "published":
            if condition.gte is not None:
                clauses.append("p.published >= %s")
                params.append(condition.gte)
            if condition.lt is not None:
                clauses.append("p.published < %s")
                params.append(condition.lt)
        else:
            raise ValueError(f"papers cannot be filtered by {condition!r}")
    return clauses, params


class _PaperDatabaseBackend(SearchBackend):
    engine = "database"
    source = ""
    match = ""
    rank = ""
    cited_order = ""

    def _match_text(self, clauses: list[Clause]) -> str:
        raise NotImplementedError

    def matching(self, query: SearchQuery, ids: Sequence[int]) -> set[int]:
        clauses = query.clauses()
        if not clauses or not ids:
            return set()
        conditions, filter_params = _filters(query)
        among = "p.id IN (" + ", ".join(["%s"] * len(ids)) + ")"
        where = " AND ".join([self.match, among, *conditions])
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT p.id FROM {self.source} WHERE {where}",
                [self._match_text(clauses), *ids, *filter_params],
            )
            return {row[0] for row in cursor.fetchall()}

    def _order(self, sort: str) -> str:
        return {
            "relevance": "rank DESC, p.published DESC",
            "newest": "p.published DESC, p.id DESC",
            "oldest": "p.published ASC, p.id ASC",
            "cited": self.cited_order,
        }.get(sort, "rank DESC, p.published DESC")


class SqliteFts5PaperBackend(_PaperDatabaseBackend):
    """FTS5's bm25 with title ten times abstract; exact counts and order at any size the
    embedded default is meant for."""

    source = "papers_paper_fts f JOIN papers_paper p ON p.id = f.rowid"
    match = "papers_paper_fts MATCH %s"
    # bm25 is lower for better matches; negate so that rank sorts descending on both vendors.
    rank = "-bm25(papers_paper_fts, 10.0, 1.0, 1.0)"
    cited_order = "p.cited_by_count IS NULL, p.cited_by_count DESC, rank DESC"

    def _match_text(self, clauses: list[Clause]) -> str:
        return _fts5(clauses)

    def words_held(self, words: Sequence[str]) -> list[bool]:
        """One query: a first match of each part of the words in the FTS5 table (an index
        lookup each; a joined word is held when its parts are, base.held_by_parts)."""
        return held_by_parts(words, self._parts_held)

    def _parts_held(self, parts: list[str]) -> list[bool]:
        probes = ", ".join(
            f"EXISTS (SELECT 1 FROM papers_paper_fts WHERE {self.match})" for _ in parts
        )
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {probes}", [self._match_text(parse_text(part)) for part in parts]
            )
            return [bool(held) for held in cursor.fetchone()]

    def search(self, query: SearchQuery) -> SearchPage[int]:
        clauses = query.clauses()
        if not clauses:
            return SearchPage()
        conditions, filter_params = _filters(query)
        where = " AND ".join([self.match, *conditions])
        params = [_fts5(clauses, any_word=query.any_word), *filter_params]
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {self.source} WHERE {where}", params)
            total = cursor.fetchone()[0]
            if not total:
                return SearchPage()
            cursor.execute(
                f"SELECT p.id, {self.rank} AS rank FROM {self.source} WHERE {where} "
                f"ORDER BY {self._order(query.sort)} LIMIT %s OFFSET %s",
                [*params, query.limit, query.offset],
            )
            rows = cursor.fetchall()
        scores = [float(row[1]) for row in rows] if query.sort == "relevance" else []
        return SearchPage(items=[row[0] for row in rows], total=total, scores=scores)


# A word's lexemes all among the commonest, or a first match of it through the GIN index.
_PG_WORDS_HELD = f"""
SELECT (cardinality(lexemes) > 0 AND lexemes <@ common.elems) OR EXISTS (
    SELECT 1 FROM {PaperSearchDocument._meta.db_table} d
    WHERE d.document @@ websearch_to_tsquery('english', w.word)
)
FROM unnest(%s::text[]) WITH ORDINALITY AS w(word, position)
CROSS JOIN LATERAL (
    SELECT tsvector_to_array(to_tsvector('english', w.word)) AS lexemes
) AS analysed
CROSS JOIN (
    SELECT coalesce((
        SELECT most_common_elems::text::text[] FROM pg_stats
        WHERE schemaname = current_schema()
        AND tablename = '{PaperSearchDocument._meta.db_table}' AND attname = 'document'
    ), '{{}}') AS elems
) AS common
ORDER BY w.position
"""
# About how many index entries a word's lookup keeps (see words_held).
FUZZY_LIMIT = 100


class PostgresPaperBackend(_PaperDatabaseBackend):
    """ts_rank_cd over the weighted documents; exact up to COUNT_CAP matches, a bounded
    candidate pool beyond (see the module docstring)."""

    source = "papers_papersearchdocument d JOIN papers_paper p ON p.id = d.paper_id"
    match = f"{PG_VECTOR} @@ websearch_to_tsquery('english', %s)"
    rank = f"ts_rank_cd({PG_VECTOR}, websearch_to_tsquery('english', %s))"
    cited_order = "p.cited_by_count DESC NULLS LAST, rank DESC"

    def _match_text(self, clauses: list[Clause]) -> str:
        return pg_tsquery_text(clauses)

    def words_held(self, words: Sequence[str]) -> list[bool]:
        """One query. A word whose every lexeme is among the documents' most common ones (the
        planner's statistics, `pg_stats.most_common_elems`: about the 1,000 commonest) is
        held; any other is looked up in the GIN index, a bitmap scan whose work is bounded by
        `gin_fuzzy_search_limit` (GIN keeps about that many entries of a longer list, drawn at
        random, so a held word still has some). The planner would take a first match of an
        `EXISTS` from a sequential scan, which is quick for a common word and reads every
        document for one no paper holds (0.5-1 s at 1M papers), so sequential scans are off
        for this query. A joined word is held when its parts are (base.held_by_parts)."""
        return held_by_parts(words, self._parts_held)

    def _parts_held(self, parts: list[str]) -> list[bool]:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('enable_seqscan', 'off', true), "
                "set_config('gin_fuzzy_search_limit', %s, true)",
                [str(FUZZY_LIMIT)],
            )
            cursor.execute(_PG_WORDS_HELD, [parts])
            return [bool(held) for (held,) in cursor.fetchall()]

    def search(self, query: SearchQuery) -> SearchPage[int]:
        """At most two queries whatever the data size: the capped count first, since how many
        papers match decides how to fetch them."""
        clauses = query.clauses()
        if not clauses:
            return SearchPage()
        text = pg_tsquery_text(clauses, any_word=query.any_word)
        conditions, filter_params = _filters(query)
        where = " AND ".join([self.match, *conditions])
        order = self._order(query.sort)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {self.source} WHERE {where} LIMIT %s) h",
                [text, *filter_params, COUNT_CAP + 1],
            )
            total = cursor.fetchone()[0]
            if not total:
                return SearchPage()
            capped = total > COUNT_CAP
            pooled = capped and query.sort in ("relevance", "cited")
            if not capped or pooled:
                # Few matches: take them all from the GIN index, then sort. Left to itself the
                # planner may walk every paper by date hoping to meet 20 matches soon, which
                # for a rare word is a scan of the whole table (1.5 s at 1M papers). Many
                # matches, ranked: the first COUNT_CAP the index yields are the pool.
                select = (
                    f"WITH p AS MATERIALIZED ("
                    f"SELECT p.id, p.published, p.cited_by_count, {self.rank} AS rank "
                    f"FROM {self.source} WHERE {where} LIMIT %s) "
                    f"SELECT p.id, p.rank FROM p"
                )
                params = [text, text, *filter_params, COUNT_CAP]
            else:
                # Many matches in date order: the date index meets 20 of them at once.
                select = f"SELECT p.id, {self.rank} AS rank FROM {self.source} WHERE {where}"
                params = [text, text, *filter_params]
            cursor.execute(
                f"{select} ORDER BY {order} LIMIT %s OFFSET %s",
                [*params, query.limit, query.offset],
            )
            rows = cursor.fetchall()
        return SearchPage(
            items=[row[0] for row in rows],
            total=min(total, COUNT_CAP),
            total_is_capped=capped,
            approximate=pooled,
            scores=[float(row[1]) for row in rows] if query.sort == "relevance" else [],
        )


def paper_database_backend(collection) -> SearchBackend:
    if connection.vendor == "postgresql":
        return PostgresPaperBackend(collection)
    if connection.vendor == "sqlite":
        return SqliteFts5PaperBackend(collection)
    raise NotImplementedError(f"no paper search for {connection.vendor}")
