"""The matching backlog's sweep beside a bare index read of the same papers.

One sweep step (`researchers.matching.backlog.sweep_never_tried`) examines MATCH_SWEEP_ROWS
papers from where the sweep stands and finds which have no match state. The reference is the
least any such step must do: read the same number of (id, published) pairs from the papers'
(published, id) index, in the same stretches, with no match state looked up. Both are timed
interleaved, step by step over one whole pass of the table, so that both see the same machine
load; printed: p50 and p95 of each and the ratio sweep / reference, and
`papers_to_match(limit=100)` when nothing waits.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_backlog_bench \\
        python benchmarks/match_backlog.py --size 300000

`--size N` fills an empty database first with N generated papers a minute apart, every one but
one in 50,000 with a match state (status "matched"): the steady state, when the sweep finds
next to nothing and its cost is all overhead. PostgreSQL only (the rows are written with
generate_series).
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

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from papers.models import Paper  # noqa: E402
from researchers.matching.backlog import (  # noqa: E402
    SWEEP_STRETCH,
    _Position,
    _stretch,
    papers_to_match,
    sweep_never_tried,
)
from researchers.models import MatchSweep  # noqa: E402

FILL = """
INSERT INTO papers_paper (arxiv_id, version, title, abstract, authors, categories,
    primary_category, published, doi, journal_ref, comments, report_no, license, submitter,
    slug, is_withdrawn, is_deleted, source_hash, created_at, modified_at)
SELECT 'bench.' || g, 1, 'Generated paper ' || g, '', '', 'cs.LG', 'cs.LG',
    now() - (g || ' minutes')::interval, '', '', '', '', '', '', '', false, false, '', now(), now()
FROM generate_series(1, %s) AS g;
INSERT INTO researchers_papermatchstate (paper_id, status, s2_status, openalex_status,
    published, attempts, last_attempt_at, matched_authors, last_error, claim)
SELECT id, 'matched', '', '', published, 1, now(), 0, '', ''
FROM papers_paper WHERE id %% 50000 <> 0;
ANALYZE papers_paper;
ANALYZE researchers_papermatchstate;
"""


def fill(size: int) -> None:
    if Paper.objects.exists():
        return
    print(f"generating {size:,} papers ...", flush=True)
    with connection.cursor() as cursor:
        cursor.execute(FILL, [size])


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=300_000)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("PostgreSQL only: set DATABASE_URL")
    call_command("migrate", verbosity=0)
    fill(args.size)
    rows = settings.MATCH_SWEEP_ROWS
    papers = Paper.objects.count()
    MatchSweep.objects.all().delete()
    at = _Position()
    sweep, reference = [], []

    def read_stretches() -> None:
        nonlocal at
        budget = rows
        while budget > 0:
            stretch = _stretch(at, min(SWEEP_STRETCH, budget))
            if not stretch:
                at = _Position()
                return
            budget -= len(stretch)
            pk, published = stretch[-1]
            at = _Position(pk, published, published is None)

    while not MatchSweep.objects.filter(passes__gte=1).exists():
        sweep.append(timed(lambda: sweep_never_tried(100)))
        reference.append(timed(read_stretches))
    backlog = [timed(lambda: papers_to_match(limit=100)) for _ in range(5)]
    load = os.getloadavg()[0]
    print(f"{papers:,} papers, MATCH_SWEEP_ROWS {rows:,}, {len(sweep)} steps for one pass")
    for name, values in (("sweep step", sweep), ("reference (index read)", reference)):
        print(
            f"{name:>24}: p50 {statistics.median(values) * 1000:7.1f} ms"
            f"  p95 {percentile(values, 0.95) * 1000:7.1f} ms"
        )
    ratio = statistics.median(sweep) / statistics.median(reference)
    print(f"ratio sweep / reference (p50): {ratio:.2f}")
    waiting = statistics.median(backlog) * 1000
    print(f"papers_to_match(limit=100), nothing waiting: p50 {waiting:.1f} ms")
    print(f"load average (1 min) at the end: {load:.1f}")


if __name__ == "__main__":
    main()
