"""A new web worker's first request, with the warm-up (deploy/gunicorn.conf.py,
wovepaper.warmup) and without it (WEB_WARM_UP=0).

For each page (a search by words and meaning, the home page, a paper page, a researcher page)
gunicorn starts with one worker and production settings (Redis as the cache, the page cache
off, so every request is rendered), once without the warm-up and once with it. The page's
first request is timed from the moment the worker says it accepts (its "ready" log line), then
the same page again: the reference, the page as a warm worker serves it, measured in the same
run. Also printed: the worker's start, from gunicorn's launch to that line, which the warm-up
lengthens by what it moves out of the first request.

    WOVEPAPER_DATA_DIR=/tmp/demo python benchmarks/first_request.py   # after manage.py demo

The encoder's model is prepared first (manage.py prepare_encoder), as a deploy does: its
export is a deploy step, not a worker's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from benchmarks.serving import Server, production_env  # noqa: E402
from papers.models import Paper  # noqa: E402
from researchers.models import Researcher  # noqa: E402


def pages() -> dict[str, str]:
    paper = Paper.objects.filter(is_deleted=False).order_by("-published").first()
    researcher = Researcher.objects.order_by("-paper_count").first()
    if paper is None or researcher is None:
        raise SystemExit("no papers or researchers here: run manage.py demo (or an import) first")
    return {
        "search (hybrid)": "/search?q=graph+neural+networks+for+molecules",
        "home": "/",
        "paper": paper.get_absolute_url(),
        "researcher": researcher.get_absolute_url(),
    }


def first_and_warm(path: str, *, warm_up: bool, env: dict[str, str], port: int, runs: int):
    """Per run: the worker's start (s), its first request to `path` (ms), the next (ms)."""
    results = []
    for run in range(runs):
        subprocess.run(["redis-cli", "-u", env["REDIS_URL"], "flushdb"], check=True, stdout=-3)
        server = Server(
            port,
            1,
            {**env, "WEB_WARM_UP": "1" if warm_up else "0", "PAGE_CACHE_SECONDS": "0"},
            headers={"X-Forwarded-Proto": "https"},
            log=OUT / f"first-request-{run}.log",
        )
        try:
            first = server.get(path)
            warm = server.get(path)
        finally:
            server.stop()
        results.append((server.ready_seconds, first, warm))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8391)
    parser.add_argument("--runs", type=int, default=3, help="servers started per page and setting")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    arguments = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    call_command("prepare_encoder")
    env = production_env(arguments.redis)
    print(
        f"{'page':<18} {'warm-up':<8} {'worker start':>13} {'first request':>14} "
        f"{'warm request':>13} {'first / warm':>13}"
    )
    for name, path in pages().items():
        for warm_up in (False, True):
            results = first_and_warm(
                path, warm_up=warm_up, env=env, port=arguments.port, runs=arguments.runs
            )
            start = statistics.median(r[0] for r in results)
            first = statistics.median(r[1] for r in results)
            warm = statistics.median(r[2] for r in results)
            print(
                f"{name:<18} {'on' if warm_up else 'off':<8} {start:>11.2f} s "
                f"{first:>11.0f} ms {warm:>10.0f} ms {first / warm:>12.1f}×"
            )
    print(f"(medians of {arguments.runs} servers each; one worker; page cache off)")


if __name__ == "__main__":
    main()
