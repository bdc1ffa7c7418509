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


def _estimate(cursor, table: str) -> int:
    if connection.vendor == "postgresql":
        cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass", [table])
        row = cursor.fetchone()
        estimate = int(row[0]) if row else -1
        # -1 means never analysed; a small table may be estimated as 0 until autovacuum runs.
        if estimate > EXACT_UP_TO:
            return estimate
    # A capped count: exact for small tables, bounded work for large ones.
    cursor.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {connection.ops.quote_name(table)} LIMIT %s) AS t",
        [EXACT_UP_TO + 1],
    )
    return int(cursor.fetchone()[0])


def site_figures() -> dict[str, int]:
    """Approximate row counts for papers, researchers and institutions, cached for a while.

    Never a full COUNT(*) on the big tables: PostgreSQL's statistics (pg_class.reltuples) past
    EXACT_UP_TO rows, a count capped at EXACT_UP_TO + 1 below that.
    """
    figures = cache.get(CACHE_KEY)
    if figures is None:
        with connection.cursor() as cursor:
            figures = {name: _estimate(cursor, table) for name, table in FIGURE_TABLES.items()}
        cache.set(CACHE_KEY, figures, CACHE_SECONDS)
    return figures
