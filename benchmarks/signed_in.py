"""A signed-in page view against an anonymous one, in CPU time per request, in this process.

The HTTP benchmark (benchmarks/pages.py) counts page views per second with wrk; on a shared
machine its figures move with everyone else's load. This one times each request's CPU in one
process with production settings (Redis as the cache, sessions read through it, the page cache
on), the database's own work not included, and counts its queries, for the pages pages.py
serves: an anonymous reader's cached page (the reference), the same page for a signed-in reader
(the body every signed-in reader shares), and that reader's state (/me/state, the parts that
are theirs, accounts.reader_state). The state is the same for every page and the browser keeps
it (READER_STATE_SECONDS) until the reader changes something, so a signed-in page view is the
shared page, plus the state on the first page after a change: printed with the state asked on
every view (a change before each), on one view in five and one in twenty (a reader going from
page to page keeps it for READER_STATE_SECONDS), and kept.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_pages_bench \\
        python benchmarks/signed_in.py [--size 20000] [--requests 300]

`--size N` loads the synthetic snapshot of N records first, as pages.py does; the reader, the
researcher and the institution are pages.py's.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Production's settings, before Django reads them (benchmarks.pages sets Django up on import).
os.environ.update(
    {
        "WOVEPAPER_PRODUCTION": "1",
        "SECRET_KEY": secrets.token_urlsafe(48),
        "ALLOWED_HOSTS": "127.0.0.1",
        "REDIS_URL": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13"),
        "DB_CONN_MAX_AGE": "600",
        "STATIC_ROOT": str(ROOT / "benchmarks" / "out" / "static"),
        "PAGE_CACHE_SECONDS": "600",
    }
)

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.cache import caches  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from benchmarks.pages import READER, ensure_researcher, pages  # noqa: E402
from benchmarks.search import ensure_papers  # noqa: E402


def queries_and_status(client: Client, path: str) -> tuple[int, int]:
    """The queries one GET of `path` makes (after a warm-up), and its status."""
    for _ in range(10):
        client.get(path, secure=True)
    queries: list[str] = []

    def count(execute, sql, params, many, context):
        queries.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        status = client.get(path, secure=True).status_code
    return len(queries), status


def interleaved(requests: int, *calls: tuple[Client, str]) -> list[float]:
    """Median CPU milliseconds of each (client, path) GET, asked in turn `requests` times, so
    that the machine's load weighs on each alike."""
    cpu: list[list[float]] = [[] for _ in calls]
    for _ in range(requests):
        for times, (client, path) in zip(cpu, calls, strict=True):
            started = time.process_time()
            client.get(path, secure=True)
            times.append((time.process_time() - started) * 1000)
    return [statistics.median(times) for times in cpu]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=None)
    parser.add_argument("--researcher-papers", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    count = ensure_papers(args.size)
    researcher, institution = ensure_researcher(args.researcher_papers)
    caches["default"].clear()
    reader, _ = get_user_model().objects.get_or_create(username=READER, defaults={"email": READER})
    anonymous = Client(HTTP_X_FORWARDED_PROTO="https", SERVER_NAME="127.0.0.1")
    signed_in = Client(HTTP_X_FORWARDED_PROTO="https", SERVER_NAME="127.0.0.1")
    signed_in.force_login(reader)
    print(
        f"{count:,} papers, {connection.vendor}; production settings in one process, "
        f"median CPU ms of {args.requests} requests each, the anonymous page, the signed-in page "
        f"and the state asked in turn (the database's work not included); "
        f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    state_path = "/me/state?v=bench"
    state_queries, status = queries_and_status(signed_in, state_path)
    assert status == 200, f"the state answered {status}"
    print(f"the reader's state, the same for every page: {state_queries} queries")
    print(
        f"{'page':34}{'anonymous':>12}{'signed-in page':>16}{'state':>8}"
        f"{'ratio, state every view':>25}{'one in five':>13}{'one in twenty':>15}{'kept':>7}"
    )
    for name, path in pages(researcher, institution).items():
        if path == "/robots.txt":
            continue
        alone_queries, _ = queries_and_status(anonymous, path)
        shared_queries, _ = queries_and_status(signed_in, path)
        assert "reader-state" in signed_in.get(path, secure=True).content.decode()
        alone, shared, state = interleaved(
            args.requests, (anonymous, path), (signed_in, path), (signed_in, state_path)
        )
        print(
            f"{name:34}{alone:>7.2f} ({alone_queries}q){shared:>10.2f} ({shared_queries}q)"
            f"{state:>8.2f}{alone / (shared + state):>25.2f}{alone / (shared + state / 5):>13.2f}"
            f"{alone / (shared + state / 20):>15.2f}{alone / shared:>7.2f}"
        )
    print(
        "ratio: the anonymous page's CPU over a signed-in page view's (the shared page, plus the "
        "state when the browser asks for it), i.e. signed-in page views per anonymous one that "
        "the same CPU serves"
    )
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
