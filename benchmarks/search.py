"""Keyword search latency: papers.search.paper_search over the papers in DATABASE_URL.

Runs each query in each sort order a few times and prints the median wall time of the first
page, with how many papers match. Load a database first, e.g. with the 1,000,000-record
synthetic snapshot (see README, Performance):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_1m python manage.py migrate
    DATABASE_URL=... python manage.py import_arxiv_snapshot benchmarks/out/snapshot-1000000.jsonl.gz
    DATABASE_URL=... python benchmarks/search.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from papers.models import Paper  # noqa: E402
from papers.search import paper_search  # noqa: E402

# From words in a fifth of all abstracts down to none at all.
QUERIES = [
    "quantum",
    "network",
    "graph",
    "zeta function",
    "topological insulator",
    "neural networks",
    "dark matter halo",
    "xylophone",
]
SORTS = ["relevance", "newest", "oldest", "cited"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("queries", nargs="*", default=QUERIES)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{Paper.objects.count():,} papers, {connection.vendor} "
        f"({connection.settings_dict['NAME']}), median of {args.repeat}"
    )
    print(f"{'query':<24}{'matches':>9}" + "".join(f"{s:>11}" for s in SORTS))
    for query in args.queries:
        cells, total = [], ""
        for sort in SORTS:
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                result = paper_search(query, sort=sort)
                times.append(time.perf_counter() - started)
            total = f"{result.total:,}{'+' if result.total_is_capped else ''}"
            cells.append(f"{statistics.median(times) * 1000:>8.0f} ms")
        print(f"{query:<24}{total:>9}" + "".join(cells))


if __name__ == "__main__":
    main()
