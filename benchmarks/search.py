"""Search latency: our search interface beside bare tantivy, per query class and sort.

For each engine given (`--engines`, default: the database of DATABASE_URL and tantivy), the
search call alone (the backend's answer for the first page: ids and total, the query built by
`papers.search.paper_search_query` as the site builds it) is timed beside the same query on a
bare tantivy index of the same titles and abstracts (the reference: tantivy-py, BM25, no
Django), interleaved query by query so that both see the same machine load. Printed per query
class (common, mid, rare, phrase, two words, no match) and sort (relevance, newest, oldest,
most cited), without and with filters (a category and a date range): p50 and p95 and the
ratio ours / reference. `--http` also times the search page over HTTP (`--http-passes` over
every query and sort), each search beside bare tantivy's answer to the same query and sort and
followed by the home page, served by gunicorn with production settings, and prints per query
class and per sort the ratio the search issue set: /search p95 / (bare tantivy p95 + home
p95), to be at most 2, with /search p95 at most 100 ms. Three configurations: every search
afresh (page cache off) with every list item rendered (list items cache off), every search
afresh with the list items from their cache (papers.listitems), and queries asked again (page
cache on); then `wrk` on /search in each.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_search_bench \\
        python benchmarks/search.py --size 100000

`--size N` loads the synthetic snapshot of N records (benchmarks/generate_snapshot.py) into an
empty database first; the tantivy indexes (ours and the reference) are built once under
benchmarks/out/ and reused while the paper count is unchanged.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

import django  # noqa: E402

django.setup()

import tantivy  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from benchmarks.serving import Server, production_env, wrk  # noqa: E402
from papers.models import Paper  # noqa: E402
from papers.search import PAPERS, paper_search_backend, paper_search_query  # noqa: E402
from wovepaper.views import PER_PAGE  # noqa: E402

# Query classes over the synthetic snapshot's vocabulary (drawn from real arXiv abstracts);
# the match counts printed beside them say what each class means at the size measured.
CLASSES: dict[str, list[str]] = {
    "common": ["quantum", "model", "field", "energy"],
    "mid": ["zeta function", "galaxies", "entanglement", "lattice"],
    "rare": ["xenon", "holonomy", "gyrokinetic", "photodissociation"],
    "phrase": ['"dark matter"', '"neural network"', '"magnetic field"', '"phase transition"'],
    "two words": ["neural networks", "black hole", "spin chain", "graph coloring"],
    "no match": ["xylophone", "zzyzx quantum", "qwertyuiop", "flibbertigibbet"],
}
SORTS = {
    "relevance": None,
    "newest": ("published", tantivy.Order.Desc),
    "oldest": ("published", tantivy.Order.Asc),
    "cited": ("cited", tantivy.Order.Desc),
}
FILTER = {"category": "hep-th", "date_from": date(2012, 1, 1), "date_to": date(2020, 1, 1)}


def ensure_papers(size: int | None) -> int:
    count = Paper.objects.count()
    if size and count == 0:
        snapshot = OUT / f"snapshot-{size}.jsonl.gz"
        if not snapshot.exists():
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "benchmarks/generate_snapshot.py"),
                    "--records",
                    str(size),
                    "--out",
                    str(snapshot),
                ],
                check=True,
            )
        call_command("import_arxiv_snapshot", str(snapshot))
        count = Paper.objects.count()
    if size and count != size:
        sys.exit(f"the database holds {count:,} papers, not {size:,}: use an empty one")
    return count


class Reference:
    """Bare tantivy over the same documents: the speed of the engine itself."""

    def __init__(self, directory: Path, count: int) -> None:
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("title", tokenizer_name="en_stem")
        builder.add_text_field("abstract", tokenizer_name="en_stem")
        builder.add_text_field("categories", tokenizer_name="raw", index_option="basic")
        builder.add_date_field("published", indexed=True, fast=True)
        builder.add_integer_field("cited", indexed=True, fast=True)
        builder.add_unsigned_field("id", fast=True)
        self.schema = builder.build()
        marker = directory / f"built-{count}"
        if not marker.exists():
            shutil.rmtree(directory, ignore_errors=True)
            directory.mkdir(parents=True)
        self.index = tantivy.Index(self.schema, path=str(directory))
        if not marker.exists():
            self._build()
            marker.touch()
        self.index.reload()

    def _build(self) -> None:
        writer = self.index.writer(heap_size=256_000_000)
        for document in (d for ids in PAPERS.id_batches(5000) for d in PAPERS.documents(ids)):
            doc = tantivy.Document()
            doc.add_unsigned("id", document["id"])
            doc.add_text("title", document["title"])
            doc.add_text("abstract", document["abstract"])
            for code in document["categories"]:
                doc.add_text("categories", code)
            if document["published"]:
                doc.add_date("published", document["published"])
            doc.add_integer("cited", document["cited"] if document["cited"] is not None else -1)
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()

    def search(self, text: str, sort: str, filtered: bool) -> int:
        query = self.index.parse_query(
            text, ["title", "abstract"], field_boosts={"title": 2.0}, conjunction_by_default=True
        )
        if filtered:
            from datetime import UTC, datetime

            query = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, query),
                    (
                        tantivy.Occur.Must,
                        tantivy.Query.term_query(self.schema, "categories", FILTER["category"]),
                    ),
                    (
                        tantivy.Occur.Must,
                        tantivy.Query.range_query(
                            self.schema,
                            "published",
                            tantivy.FieldType.Date,
                            datetime(2012, 1, 1, tzinfo=UTC),
                            datetime(2020, 1, 1, tzinfo=UTC),
                            include_upper=False,
                        ),
                    ),
                ]
            )
        searcher = self.index.searcher()
        # As many as the search page lists.
        options: dict = {"limit": PER_PAGE, "count": True}
        if SORTS[sort]:
            options["order_by_field"], options["order"] = SORTS[sort]
        result = searcher.search(query, **options)
        searcher.fast_field_values("id", [address for _, address in result.hits])
        return result.count


def use_engine(engine: str) -> None:
    # The registry keeps one backend per configuration, so switching back and forth reopens
    # nothing.
    settings.SEARCH_ENGINE = engine
    settings.SEARCH_INDEX_DIR = OUT / "search-index"


def timed(function, *args, **kwargs) -> tuple[float, object]:
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return (time.perf_counter() - started) * 1000, result


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def bench_calls(engines: list[str], reference: Reference, repeat: int) -> None:
    print(
        f"\nsearch call alone (the engine's answer: ids and total), first page of {PER_PAGE}; "
        f"ms, p50 / p95 over {repeat} runs of each of the class's {len(CLASSES['common'])} "
        "queries; ratio = p95 ours / p95 bare tantivy, measured interleaved"
    )
    print(
        f"{'class':<10}{'sort':<10}{'filters':<8}{'matches':>14}"
        + "".join(f"{engine + ' p50/p95':>22}{'ratio':>8}" for engine in engines)
        + f"{'bare tantivy p50/p95':>22}"
    )
    for name, queries in CLASSES.items():
        for sort in SORTS:
            for filtered in (False, True):
                ours: dict[str, list[float]] = {e: [] for e in engines}
                bare: list[float] = []
                matches = set()
                for _ in range(repeat):
                    for text in queries:
                        filters = _filters() if filtered else {}
                        query = paper_search_query(text, sort=sort, limit=PER_PAGE, **filters)
                        for engine in engines:
                            use_engine(engine)
                            backend = paper_search_backend()
                            ms, page = timed(backend.search, query)
                            ours[engine].append(ms)
                            if engine == engines[-1]:
                                matches.add(page.total)
                        ms, _count = timed(reference.search, text, sort, filtered)
                        bare.append(ms)
                ref95 = percentile(bare, 0.95)
                cells = "".join(
                    f"{statistics.median(v):>10.1f} /{percentile(v, 0.95):>8.1f}"
                    f"{percentile(v, 0.95) / ref95:>9.1f}x"
                    for v in ours.values()
                )
                span = f"{min(matches):,}-{max(matches):,}" if matches else "?"
                print(
                    f"{name:<10}{sort:<10}{'yes' if filtered else 'no':<8}{span:>14}{cells}"
                    f"{statistics.median(bare):>12.2f} /{percentile(bare, 0.95):>7.2f}"
                )


def _filters() -> dict:
    return {
        "category": FILTER["category"],
        "date_from": FILTER["date_from"],
        "date_to": FILTER["date_to"],
    }


# --- over HTTP --------------------------------------------------------------------------------


def search_paths() -> list[tuple[str, str, str, str]]:
    """(query class, query, sort, path) for every query and sort."""
    from urllib.parse import urlencode

    return [
        (name, text, sort, "/search?" + urlencode({"q": text, "sort": sort}))
        for name, queries in CLASSES.items()
        for text in queries
        for sort in SORTS
    ]


def database_blocks() -> tuple[int, int] | None:
    """PostgreSQL's count of this database's blocks found in its shared buffers and read from
    outside them (from the OS cache or the disk), as its statistics have them now (None on
    another vendor). A paper row read from the disk costs a search page ~0.1 ms more than one
    in the OS cache, and the home page's ten rows are always in the buffers: a run whose
    searches read many blocks measured the disk as much as the site (docs/performance.md)."""
    if connection.vendor != "postgresql":
        return None
    time.sleep(1.2)  # each server process reports its counts at most once a second
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT blks_hit, blks_read FROM pg_stat_database WHERE datname = current_database()"
        )
        hit, read = cursor.fetchone()
    return int(hit), int(read)


# The servers measured over HTTP: (page cache, list items cache, what it stands for).
HTTP_CONFIGURATIONS = (
    (False, False, "every search afresh, every list item rendered"),
    (False, True, "every search afresh, list items from the cache"),
    (True, True, "queries asked again, from the page cache"),
)


def bench_http(
    engine: str,
    reference: Reference,
    port: int,
    workers: int,
    repeat: int,
    wrk_seconds: int,
    page_cache: bool,
    list_items: bool,
    env: dict[str, str],
) -> None:
    """Every search answered afresh (the page cache off: the engine, the queries and the
    rendering each time), with its list items rendered each time (`list_items` off) or
    served from the items' cache (papers.listitems; the warm-up pass below has rendered each
    once, as any earlier page showing the same papers would), or, with `page_cache`, as
    production serves a query asked again. The home page is asked after each search, so that
    each query class has its own home page figures measured under the same load."""
    server = Server(
        port,
        workers,
        {
            **env,
            "SEARCH_ENGINE": engine,
            "SEARCH_INDEX_DIR": str(OUT / "search-index"),
            # The benchmark's own (a vector index left in var/ by the demo would hold vectors of
            # papers this database does not have, and hybrid would embed every query).
            "VECTOR_INDEX_DIR": str(OUT / "vector-index"),
            "PAGE_CACHE_SECONDS": "600" if page_cache else "0",
            "LIST_ITEM_CACHE_SECONDS": "86400" if list_items else "0",
        },
        # As behind the TLS-terminating proxy production runs behind.
        headers={"X-Forwarded-Proto": "https"},
    )
    try:
        # Cold: neither pages nor list items are cached yet (the warm-up below renders each).
        subprocess.run(["redis-cli", "-u", env["REDIS_URL"], "flushdb"], check=True, stdout=-3)
        paths = search_paths()
        for *_, path in paths:  # warm each worker's caches and index readers
            server.get(path)
        # Each search is timed beside bare tantivy's answer to the same query and sort (the
        # engine's own speed) and followed by the home page (the site's own floor), so that
        # each cell's three figures are measured under the same load.
        search_ms: dict[tuple[str, str], list[float]] = {}
        bare_ms: dict[tuple[str, str], list[float]] = {}
        home_ms: dict[tuple[str, str], list[float]] = {}
        blocks_before = database_blocks()
        for _ in range(repeat):
            for name, text, sort, path in paths:
                bare_ms.setdefault((name, sort), []).append(
                    timed(reference.search, text, sort, False)[0]
                )
                search_ms.setdefault((name, sort), []).append(server.get(path))
                home_ms.setdefault((name, sort), []).append(server.get("/"))
        searches = sum(len(values) for values in search_ms.values())
        blocks_after = database_blocks()
        print(
            f"\nover HTTP, {engine} engine, page cache {'on' if page_cache else 'off'}, "
            f"query vectors {'never kept' if env.get('QUERY_VECTORS_KEPT') == '0' else 'kept'}, "
            f"list items cache {'on' if list_items else 'off'}, gunicorn {workers} workers, "
            f"one client ({searches} searches over {len(paths)} query and sort pairs, each "
            "beside bare tantivy's answer to the same query and sort and followed by the home "
            f"page); load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
        )
        if blocks_before and blocks_after:
            hit = blocks_after[0] - blocks_before[0]
            read = blocks_after[1] - blocks_before[1]
            # The home page's rows are the same ten each time: the reads are the searches'.
            print(
                f"PostgreSQL meanwhile: {read:,} blocks read from outside its shared buffers "
                f"(the OS cache or the disk), {read / searches:.1f} a search; {hit:,} found in "
                "them"
            )
        print(
            "ratio = /search p95 / (bare tantivy p95 + home p95); the target: <= 2 and "
            "/search p95 <= 100 ms in every class and every sort"
        )
        print(
            f"{'class or sort':<16}{'/search p50 / p95':>20}{'bare tantivy p50 / p95':>25}"
            f"{'home p50 / p95':>18}{'ratio':>8}"
        )
        groups = (
            [(name, lambda key, name=name: key[0] == name) for name in CLASSES]
            + [(f"sort: {sort}", lambda key, sort=sort: key[1] == sort) for sort in SORTS]
            + [("all", lambda key: True)]
        )
        for label, wanted in groups:
            cells = [key for key in search_ms if wanted(key)]
            figures = [
                [ms for key in cells for ms in measured[key]]
                for measured in (search_ms, bare_ms, home_ms)
            ]
            p95s = [percentile(values, 0.95) for values in figures]
            ratio = p95s[0] / (p95s[1] + p95s[2])
            flag = " over" if ratio > 2 or p95s[0] > 100 else ""
            print(
                f"{label:<16}"
                + "".join(
                    f"{statistics.median(values):>{width - 9}.1f} /{p95:>7.1f}"
                    for values, p95, width in zip(figures, p95s, (20, 25, 18), strict=True)
                )
                + f"{ratio:>8.2f}{flag}"
            )
        if wrk_seconds and shutil.which("wrk"):
            print(f"wrk -t2 -c32 -d{wrk_seconds}s over the {len(paths)} search paths:")
            print(
                wrk(
                    server,
                    [path for *_, path in paths],
                    seconds=wrk_seconds,
                    script=OUT / "wrk-search.lua",
                )
            )
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--size",
        type=int,
        default=None,
        help="load this many synthetic papers into an empty database first "
        "(100000 for CI-size runs, 1000000 for docs/performance.md's figures)",
    )
    parser.add_argument("--engines", default="database,tantivy")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--http", action="store_true", help="also time the pages over HTTP")
    parser.add_argument(
        "--http-passes",
        type=int,
        default=5,
        help="passes over the 96 query and sort pairs over HTTP (5: 80 searches a class)",
    )
    parser.add_argument(
        "--first-time",
        action="store_true",
        help="keep no query vectors: every search over HTTP embeds its words",
    )
    parser.add_argument("--port", type=int, default=18201)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--wrk-seconds", type=int, default=60)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    parser.add_argument(
        "--prepare", action="store_true", help="only load the papers and build the indexes"
    )
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    count = ensure_papers(args.size)
    engines = args.engines.split(",")
    print(
        f"{count:,} papers, {connection.vendor} ({connection.settings_dict['NAME']}), "
        f"engines: {', '.join(engines)}; {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    reference = Reference(OUT / f"tantivy-reference-{count}", count)
    if "tantivy" in engines:
        use_engine("tantivy")
        backend = paper_search_backend()
        if getattr(backend, "document_count", lambda: 0)() != count:
            started = time.perf_counter()
            call_command("rebuild_search_index", "papers", verbosity=0)
            print(
                f"built our tantivy index of {count:,} papers in "
                f"{time.perf_counter() - started:.0f} s"
            )
    if args.prepare:
        return
    bench_calls(engines, reference, args.repeat)
    if args.http:
        env = production_env(args.redis)
        if args.first_time:
            # Every search embeds its words, as a query asked for the first time does.
            env |= {"QUERY_VECTORS_KEPT": "0", "QUERY_VECTOR_CACHE_SECONDS": "0"}
        for engine in engines:
            for page_cache, list_items, meaning in HTTP_CONFIGURATIONS:
                print(f"\n[{meaning}]")
                bench_http(
                    engine,
                    reference,
                    args.port,
                    args.workers,
                    args.http_passes,
                    args.wrk_seconds,
                    page_cache,
                    list_items,
                    env,
                )
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
