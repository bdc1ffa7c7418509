"""Site-wide reads: the figures on the home page."""

from __future__ import annotations

from django.core.cache import cache
from django.db import connection

FIGURE_TABLES = {
    "papers": "papers_paper",
    "researchers": "researchers_researcher",
    "institutions": "institutions_institution",
}
# Past this many rows an exact count is not worth its cost; the planner's estimate is used.
EXACT_UP_TO = 100_000
CACHE_KEY = "site_figures:v1"
CACHE_SECONDS = 15 * 60


def _figures(cursor) -> dict[str, int]:
    figures: dict[str, int] = {}
    if connection.vendor == "postgresql":
        cursor.execute(
            "SELECT relname, reltuples::bigint FROM pg_class WHERE relname = ANY(%s) "
            "AND relkind = 'r'",
            [list(FIGURE_TABLES.values())],
        )
        estimates = dict(cursor.fetchall())
        # -1 means never analysed; a small table may be estimated as 0 until autovacuum runs.
        figures = {
            name: int(estimates[table])
            for name, table in FIGURE_TABLES.items()
            if estimates.get(table, -1) > EXACT_UP_TO
        }
    rest = [(name, table) for name, table in FIGURE_TABLES.items() if name not in figures]
    if rest:
        # Capped counts, all in one statement: exact for small tables, bounded for large ones.
        columns = ", ".join(
            f"(SELECT count(*) FROM (SELECT 1 FROM {connection.ops.quote_name(table)} "
            f"LIMIT {EXACT_UP_TO + 1}) AS t{i})"
            for i, (_, table) in enumerate(rest)
        )
        cursor.execute(f"SELECT {columns}")
        figures.update(zip((name for name, _ in rest), map(int, cursor.fetchone()), strict=True))
    return figures


def site_figures() -> dict[str, int]:
    """Approximate row counts for papers, researchers and institutions, cached for a while.

    Never a full COUNT(*) on the big tables: PostgreSQL's statistics (pg_class.reltuples) past
    EXACT_UP_TO rows, a count capped at EXACT_UP_TO + 1 below that.
    """
    figures = cache.get(CACHE_KEY)
    if figures is None:
        with connection.cursor() as cursor:
            figures = _figures(cursor)
        cache.set(CACHE_KEY, figures, CACHE_SECONDS)
    return figures
