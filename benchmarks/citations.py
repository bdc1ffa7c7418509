"""Benchmark the citation edge loader (papers.citations.load.citations_load: resolve each cited work
to an archive paper, replace each citing paper's edges from the source, write in batches with
COPY) against PostgreSQL's raw COPY of the same rows into the same table, in the same run.

Every edge is SYNTHETIC, made here from a seeded random generator, and never leaves the
benchmark's own database (created, migrated and dropped): `--papers` synthetic archive papers
(arXiv ids 9901.00000…, titles "Synthetic paper n") each cite `--per-paper` synthetic works,
of which `--archive-share` are other synthetic archive papers (by arXiv id, or by DOI for a
fifth of them, as a published version would be), and the rest works outside it known by an
arXiv id, a DOI (prefix 10.99999/synthetic.) or an S2 id.

Phases, on one database: the rows the loader will write are computed (untimed) and written as
COPY text; COPY of those rows into the empty table (timed); TRUNCATE; the loader's first load
of the same edges, `--batch` citing papers a call (timed); a re-fetch of all of them, which
replaces every edge (timed); TRUNCATE; COPY again (timed), so that a change of load on a shared
machine shows. The ratio is the loader's first load against the mean of the two COPY runs.

    python benchmarks/citations.py --papers 20000 --per-paper 50

`--page` measures the pages instead: a synthetic paper cited by `--citing` of the `--papers`
synthetic papers (each citing paper with `--per-paper` references besides, so the table is not
that paper's edges alone), its page, its references page and its cited-by pages (by date, by
citations, the last page) rendered `--repeat` times each with the page cache off, as an
anonymous reader: queries per request and the median and p95 time.

    python benchmarks/citations.py --page --papers 1000000 --citing 10000 --per-paper 20
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.import_snapshot import _pg_admin  # noqa: E402

DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432"
DEFAULT_DB_NAME = "wovepaper_bench_citations"
FETCHED = datetime(2026, 12, 2, tzinfo=UTC)


def synthetic_arxiv_id(n: int) -> str:
    return f"99{n // 100000:02d}.{n % 100000:05d}"


def make_papers(count: int) -> list[int]:
    from papers.models import Paper

    start = datetime(2020, 1, 1, tzinfo=UTC)
    # In chunks, so that a million papers never sit in memory at once.
    for first in range(0, count, 50000):
        papers = [
            Paper(
                arxiv_id=synthetic_arxiv_id(n),
                title=f"Synthetic paper {n}",
                doi=f"10.99999/SYNTHETIC.PAPER.{n}" if n % 5 == 0 else "",
                published=start + timedelta(minutes=n),
                cited_by_count=n % 997,
            )
            for n in range(first, min(count, first + 50000))
        ]
        Paper.objects.bulk_create(papers, batch_size=5000)
    return list(Paper.objects.order_by("pk").values_list("pk", flat=True))


def make_edges(paper_ids: list[int], per_paper: int, archive_share: float, seed: int):
    """The synthetic edges, one CitingPaperEdges a citing paper."""
    from papers.citations.load import CitingPaperEdges
    from sources.citation_answers import CitedWork

    rng = random.Random(seed)
    edges = []
    outside = 0
    for pk in paper_ids:
        works = []
        for _ in range(per_paper):
            if rng.random() < archive_share:
                n = rng.randrange(len(paper_ids))
                if n % 5 == 0 and rng.random() < 0.2:
                    work = CitedWork(doi=f"10.99999/synthetic.paper.{n}")
                else:
                    work = CitedWork(arxiv_id=synthetic_arxiv_id(n))
            else:
                outside += 1
                kind = outside % 3
                work = CitedWork(
                    arxiv_id=f"1{outside % 10}{outside // 10 % 100:02d}.{outside % 100000:05d}"
                    if kind == 0
                    else "",
                    doi=f"10.99999/synthetic.work.{outside}" if kind == 1 else "",
                    s2_id=f"synthetic{outside:032d}" if kind == 2 else "",
                )
            work.title = f"Synthetic work {rng.randrange(10**9)}"
            work.year = rng.randrange(1990, 2026)
            work.citation_count = rng.randrange(0, 5000)
            works.append(work)
        edges.append(
            CitingPaperEdges(citing_paper_id=pk, source="s2", fetched_at=FETCHED, works=works)
        )
    return edges


def copy_payload(rows) -> bytes:
    """The rows as COPY text (the loader's own formatting, untimed here)."""
    from papers.citations.load import copy_text

    return "".join(copy_text(rows)).encode()


def timed_copy(payload: bytes) -> float:
    from django.db import connection, transaction

    from papers.citations.load import COPY_FIELDS
    from papers.ingest.upsert import _columns, quote_name
    from papers.models import Citation

    table = quote_name(Citation._meta.db_table)
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        with cursor.copy(f"COPY {table} ({_columns(Citation, COPY_FIELDS)}) FROM STDIN") as copy:
            view = memoryview(payload)
            for start in range(0, len(view), 1 << 20):
                copy.write(view[start : start + (1 << 20)])
    return time.perf_counter() - started


def timed_load(edges, batch: int) -> float:
    from papers.citations.load import citations_load

    started = time.perf_counter()
    for start in range(0, len(edges), batch):
        citations_load(edges[start : start + batch])
    return time.perf_counter() - started


def truncate() -> None:
    from django.db import connection

    from papers.models import Citation

    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {Citation._meta.db_table}")
        cursor.execute(f"VACUUM ANALYZE {Citation._meta.db_table}")


def run(args: argparse.Namespace) -> dict:
    import django
    from django.core.management import call_command
    from django.db import connection

    django.setup()
    call_command("migrate", verbosity=0)
    from papers.citations.load import citation_rows
    from papers.models import Citation

    print("making synthetic papers and edges (untimed)", file=sys.stderr, flush=True)
    paper_ids = make_papers(args.papers)
    edges = make_edges(paper_ids, args.per_paper, args.archive_share, args.seed)
    rows = citation_rows(edges)
    payload = copy_payload(rows)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    count = len(rows)
    resolved = sum(1 for row in rows if row[2] is not None)

    print("COPY reference (1)", file=sys.stderr, flush=True)
    copy_first = timed_copy(payload)
    truncate()
    print("loader: first load", file=sys.stderr, flush=True)
    load_first = timed_load(edges, args.batch)
    assert Citation.objects.count() == count
    print("loader: re-fetch (replaces every edge)", file=sys.stderr, flush=True)
    load_again = timed_load(edges, args.batch)
    assert Citation.objects.count() == count
    truncate()
    print("COPY reference (2)", file=sys.stderr, flush=True)
    copy_second = timed_copy(payload)
    copy_mean = (copy_first + copy_second) / 2
    return {
        "edges": count,
        "resolved": resolved,
        "citing_papers": len(edges),
        "batch": args.batch,
        "copy_edges_per_s": [round(count / copy_first), round(count / copy_second)],
        "load_edges_per_s": round(count / load_first),
        "refetch_edges_per_s": round(count / load_again),
        "ratio_to_copy": round(copy_mean / load_first, 3),
        "load_average": os.getloadavg(),
    }


def _timed_pages(paths: dict[str, str], repeat: int) -> dict:
    from django.db import connection
    from django.test import Client, override_settings
    from django.test.utils import CaptureQueriesContext

    results = {}
    client = Client()
    with override_settings(PAGE_CACHE_SECONDS=0, ALLOWED_HOSTS=["*"]):
        for name, path in paths.items():
            assert client.get(path).status_code == 200, path  # warm the templates
            times, queries = [], 0
            for _ in range(repeat):
                with CaptureQueriesContext(connection) as captured:
                    started = time.perf_counter()
                    response = client.get(path)
                    times.append(time.perf_counter() - started)
                assert response.status_code == 200, path
                queries = max(queries, len(captured))
            times.sort()
            slowest = max(captured.captured_queries, key=lambda q: float(q["time"]))
            results[name] = {
                "path": path,
                "queries": queries,
                "slowest_query_ms": round(1000 * float(slowest["time"]), 1),
                "slowest_query": slowest["sql"][:300],
                "median_ms": round(1000 * times[len(times) // 2], 1),
                "p95_ms": round(1000 * times[min(len(times) - 1, int(0.95 * len(times)))], 1),
            }
    return results


def run_pages(args: argparse.Namespace) -> dict:
    import django
    from django.core.management import call_command
    from django.db import connection

    django.setup()
    call_command("migrate", verbosity=0)
    from papers.citations.load import citations_load
    from papers.models import Paper
    from sources.citation_answers import CitedWork

    started = time.perf_counter()
    if args.reuse and Paper.objects.filter(title="Synthetic paper 0").exists():
        # A database kept from an earlier --page --keep run: the same papers and edges.
        target = Paper.objects.order_by("-pk").first()
        assert target is not None
        return _pages_result(target, args, setup_s=0.0)
    print("making synthetic papers and edges (untimed)", file=sys.stderr, flush=True)
    paper_ids = make_papers(args.papers)
    target = Paper.objects.get(pk=paper_ids[-1])
    citing = paper_ids[: args.citing]
    edges = make_edges(citing, args.per_paper, args.archive_share, args.seed)
    for edge in edges:
        edge.works.append(CitedWork(arxiv_id=target.arxiv_id))
    own = make_edges([target.pk], 100, args.archive_share, args.seed + 1)
    for start in range(0, len(edges), args.batch):
        citations_load(edges[start : start + args.batch])
    citations_load(own)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return _pages_result(target, args, setup_s=time.perf_counter() - started)


def _pages_result(target, args: argparse.Namespace, *, setup_s: float) -> dict:
    from papers.models import Citation, Paper

    cited_by = Citation.objects.filter(cited_paper=target).count()
    last_page = -(-cited_by // 50)
    base = f"/papers/{target.arxiv_id}"
    pages = _timed_pages(
        {
            "paper page": target.get_absolute_url(),
            "references": f"{base}/references",
            "cited by, newest": f"{base}/cited-by",
            "cited by, most cited": f"{base}/cited-by?sort=citations",
            f"cited by, page {last_page}": f"{base}/cited-by?page={last_page}",
            "API citations": f"/api/v1/papers/{target.arxiv_id}/citations/",
        },
        args.repeat,
    )
    return {
        "papers": Paper.objects.count(),
        "edges": Citation.objects.count(),
        "cited_by": cited_by,
        "setup_s": round(setup_s),
        "repeat": args.repeat,
        "pages": pages,
        "load_average": os.getloadavg(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=20000)
    parser.add_argument("--per-paper", type=int, default=50)
    parser.add_argument("--archive-share", type=float, default=0.1)
    parser.add_argument("--batch", type=int, default=1000, help="citing papers per loader call")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--server", default=DEFAULT_SERVER)
    parser.add_argument("--db-name", default=DEFAULT_DB_NAME)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--page", action="store_true", help="measure the pages, not the loader")
    parser.add_argument("--citing", type=int, default=10000, help="papers citing the one paper")
    parser.add_argument("--repeat", type=int, default=40, help="requests per page (--page)")
    parser.add_argument(
        "--reuse", action="store_true", help="--page on the database a --keep run left"
    )
    args = parser.parse_args()

    if not args.reuse:
        _pg_admin(args.server, f'DROP DATABASE IF EXISTS "{args.db_name}" WITH (FORCE)')
        _pg_admin(args.server, f'CREATE DATABASE "{args.db_name}"')
    os.environ["DATABASE_URL"] = f"{args.server}/{args.db_name}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")
    try:
        result = run_pages(args) if args.page else run(args)
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep:
            _pg_admin(args.server, f'DROP DATABASE IF EXISTS "{args.db_name}" WITH (FORCE)')
    if args.page:
        print(
            f"SYNTHETIC archive: {result['papers']:,} papers, {result['edges']:,} edges; one "
            f"paper cited by {result['cited_by']:,} of them (setup {result['setup_s']} s, "
            f"untimed); {result['repeat']} requests a page, page cache off"
        )
        for name, page in result["pages"].items():
            print(
                f"  {name:<24} {page['queries']:>2} queries, median {page['median_ms']} ms, "
                f"p95 {page['p95_ms']} ms"
            )
        print(f"  load average (1/5/15 min) at the end: {result['load_average']}")
        print(json.dumps(result))
        return 0
    print(
        f"SYNTHETIC edges: {result['edges']:,} from {result['citing_papers']:,} citing papers "
        f"({result['resolved']:,} resolved to archive papers), loader batches of "
        f"{result['batch']:,} citing papers\n"
        f"  COPY of the same rows: {result['copy_edges_per_s'][0]:,} and "
        f"{result['copy_edges_per_s'][1]:,} edges/s (before and after)\n"
        f"  loader, first load:    {result['load_edges_per_s']:,} edges/s "
        f"= {result['ratio_to_copy']:.2f}x COPY\n"
        f"  loader, re-fetch:      {result['refetch_edges_per_s']:,} edges/s "
        "(replaces every edge)\n"
        f"  load average (1/5/15 min) at the end: {result['load_average']}"
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
