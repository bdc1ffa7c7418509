"""Two checkouts of the site served side by side over the same database and indexes, each
request asked of one and then of the other (the order alternating), so that the machine's
drift falls on both alike: a change too small for `benchmarks/search.py`'s run-to-run spread
(a class's ratio moves by 0.2 between runs of the same code on a shared 2-core machine) shows
here as the difference of the two columns.

What is asked is `benchmarks/search.py --first-time`'s: every query class (with `--sorts`,
every sort too), the page cache and the list items' cache off, no query vector kept, each
search followed by the home page; each checkout's gunicorn with its own deploy settings.

    git worktree add ../before <commit>
    DATABASE_URL=…/wovepaper_1m SEARCH_ENGINE=tantivy SEARCH_INDEX_DIR=… VECTOR_INDEX_DIR=… \\
        python benchmarks/side_by_side.py --other ../before --passes 8 --workers 2 [--sorts]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.search import CLASSES, percentile, search_paths  # noqa: E402
from benchmarks.serving import OUT, Server, collect_static, production_env  # noqa: E402


def served(root: Path, port: int, workers: int, env: dict[str, str]) -> Server:
    """gunicorn serving the checkout at `root`, with its own static files collected."""
    own = {**env, "STATIC_ROOT": str(OUT / f"static-{port}"), "PYTHONPATH": str(root)}
    collect_static(root, own)
    return Server(port, workers, own, headers={"X-Forwarded-Proto": "https"}, root=root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--passes", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sorts", action="store_true", help="every sort, as search.py asks")
    parser.add_argument("--port", type=int, default=18231)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    args = parser.parse_args()
    env = production_env(args.redis) | {
        "QUERY_VECTORS_KEPT": "0",
        "QUERY_VECTOR_CACHE_SECONDS": "0",
        "PAGE_CACHE_SECONDS": "0",
        "LIST_ITEM_CACHE_SECONDS": "0",
        "SEARCH_INDEX_DIR": os.environ.get("SEARCH_INDEX_DIR", str(OUT / "search-index")),
        "VECTOR_INDEX_DIR": os.environ.get("VECTOR_INDEX_DIR", str(OUT / "vector-index")),
    }
    checkouts = {"this": ROOT, "other": args.other.resolve()}
    servers = {
        name: served(root, args.port + number, args.workers, env)
        for number, (name, root) in enumerate(checkouts.items())
    }
    try:
        subprocess.run(["redis-cli", "-u", args.redis, "flushdb"], check=True, stdout=-3)
        paths = [
            (name, path)
            for name, _, sort, path in search_paths()
            if args.sorts or sort == "relevance"
        ]
        for _, path in paths:  # each query once before the passes, as search.py does
            for server in servers.values():
                server.get(path)
        search: dict[str, dict[str, list[float]]] = {name: {} for name in servers}
        home: dict[str, list[float]] = {name: [] for name in servers}
        for number in range(args.passes):
            for index, (query_class, path) in enumerate(paths):
                order = list(servers.items())
                if (number + index) % 2:
                    order.reverse()
                for name, server in order:
                    search[name].setdefault(query_class, []).append(server.get(path))
                    home[name].append(server.get("/"))
        print(
            f"{len(paths)} paths x {args.passes} passes, gunicorn {args.workers} workers each; "
            f"this: {ROOT}, other: {checkouts['other']}; load average "
            f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
        )
        print(f"{'class':<12}{'this p50 / p95':>18}{'other p50 / p95':>18}")
        rows = [*((name, [name]) for name in CLASSES), ("all", list(CLASSES))]
        for label, classes in rows:
            cells = []
            for name in servers:
                values = [ms for c in classes for ms in search[name][c]]
                cells.append(f"{statistics.median(values):>9.1f} /{percentile(values, 0.95):>6.1f}")
            print(f"{label:<12}" + "".join(cells))
        cells = [
            f"{statistics.median(home[n]):>9.1f} /{percentile(home[n], 0.95):>6.1f}"
            for n in servers
        ]
        print(f"{'home page':<12}" + "".join(cells))
    finally:
        for server in servers.values():
            server.stop()


if __name__ == "__main__":
    main()
