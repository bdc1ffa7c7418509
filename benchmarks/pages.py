"""Public pages under load: requests per second with the page cache, without it, and /robots.txt.

gunicorn with `--workers` sync workers and production settings (Redis as the cache), wrk with
32 connections for `--seconds` per page, on: the home page, a paper page, a researcher page with
`--researcher-papers` papers, an institution page and a category page. Each page is measured
with the page cache on (PAGE_CACHE_SECONDS=600) and off (0), beside `/robots.txt` in the same
run (the reference: the server and the middleware with no database and no template), so the
figures read as a ratio to what this machine serves at all.

Each page is measured twice: anonymously, and signed in (wrk sends the session cookie of a real
user made here, "Synthetic Benchmark-Reader"). Signed in with the cache on, a page view is the
shared page, plus the reader's state (/me/state, accounts.reader_state) on the first page after
a change (the browser keeps it otherwise): wrk runs the page alone (the state kept), then the
page and the state alternately (a change before every view: page views per second are half its
requests per second). With the cache off the signed-in page is rendered whole for the reader,
one request.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_pages_bench \\
        python benchmarks/pages.py --size 100000 --seconds 30

`--size N` loads the synthetic snapshot of N records (benchmarks/generate_snapshot.py) into an
empty database first. The researcher and the institution are made here on the synthetic papers
(marked as such by their names), linked as matching would link them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client, override_settings  # noqa: E402

from accounts.models import Profile  # noqa: E402
from benchmarks.search import ensure_papers  # noqa: E402
from benchmarks.serving import Server, WrkResult, production_env, wrk  # noqa: E402
from institutions.models import AuthorshipInstitution, Institution  # noqa: E402
from papers.models import Authorship, Paper, PaperCategory  # noqa: E402
from researchers.institution_members import institutions_refresh  # noqa: E402
from researchers.models import Researcher  # noqa: E402
from researchers.names import name_key  # noqa: E402
from researchers.page_figures import researchers_update_stats  # noqa: E402

RESEARCHER = "Synthetic Benchmark-Researcher"
INSTITUTION = "Synthetic Benchmark Institute"

READER = "synthetic-benchmark-reader@example.invalid"
STATE = "/me/state?v=bench"


def reader_session(secret_key: str) -> str:
    """A signed-in session of a real user (onboarding done) that the server, which signs with
    `secret_key`, accepts: the session's value for wrk's Cookie header."""
    user, _ = get_user_model().objects.get_or_create(username=READER, defaults={"email": READER})
    Profile.objects.get_or_create(user=user, defaults={"onboarding": Profile.Onboarding.COMPLETED})
    client = Client()
    with override_settings(SECRET_KEY=secret_key):
        client.force_login(user)
    return client.cookies["sessionid"].value


def shares_the_page(server: Server, path: str) -> bool:
    """Whether a signed-in reader gets the shared body of `path` (with reader.js on it)."""
    request = urllib.request.Request(server.url + path, headers=server.headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return 'id="reader-state" hidden data-url' in response.read().decode()


def signed_in_wrk(
    server: Server, path: str, cookie: str, seconds: int, *, with_state: bool
) -> tuple[WrkResult, bool]:
    """wrk as the signed-in reader: the page alone, or the page and the state alternately when
    the page is the shared one."""
    anonymous = server.headers
    server.headers = {**anonymous, "Cookie": cookie}
    try:
        shared = shares_the_page(server, path)
        paths = [path, STATE] if shared and with_state else [path]
        for _ in range(8):
            for each in paths:
                server.get(each)
        return wrk(server, paths, seconds=seconds, script=OUT / "wrk-page.lua"), len(paths) == 2
    finally:
        server.headers = anonymous


def ensure_researcher(papers: int) -> tuple[Researcher, Institution]:
    """A researcher first author of `papers` papers spread over the archive, at an institution."""
    researcher, _ = Researcher.objects.get_or_create(
        name_key=name_key(RESEARCHER), defaults={"display_name": RESEARCHER}
    )
    institution, _ = Institution.objects.get_or_create(name=INSTITUTION)
    if researcher.paper_count != papers:
        total = Paper.objects.count()
        step = max(total // papers, 1)
        ids = list(Paper.objects.order_by("pk").values_list("pk", flat=True)[::step][:papers])
        firsts = list(Authorship.objects.filter(paper_id__in=ids, position=1))
        for authorship in firsts:
            authorship.researcher = researcher
        Authorship.objects.bulk_update(firsts, ["researcher"], batch_size=1000)
        AuthorshipInstitution.objects.bulk_create(
            [
                AuthorshipInstitution(authorship=a, institution=institution, paper_id=a.paper_id)
                for a in firsts
            ],
            ignore_conflicts=True,
            batch_size=1000,
        )
        researchers_update_stats([researcher.pk])
        institutions_refresh([institution.pk])
        researcher.refresh_from_db()
    return researcher, institution


def pages(researcher: Researcher, institution: Institution) -> dict[str, str]:
    busiest = (
        PaperCategory.objects.filter(is_primary=True)
        .values_list("code", flat=True)
        .order_by("code")
        .first()
    )
    paper = Paper.objects.order_by("-published").first()
    return {
        "robots.txt (reference)": "/robots.txt",
        "home": "/",
        "paper": paper.get_absolute_url(),
        f"researcher ({researcher.paper_count:,} papers)": researcher.get_absolute_url(),
        "institution": institution.get_absolute_url(),
        f"category ({busiest})": f"/categories/{busiest}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=None)
    parser.add_argument("--researcher-papers", type=int, default=2000)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--port", type=int, default=18231)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    count = ensure_papers(args.size)
    researcher, institution = ensure_researcher(args.researcher_papers)
    paths = pages(researcher, institution)
    env = production_env(args.redis)
    print(
        f"{count:,} papers, {connection.vendor}; gunicorn {args.workers} sync workers, "
        f"wrk -t2 -c32 -d{args.seconds}s per page; {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    cookie = f"sessionid={reader_session(env['SECRET_KEY'])}"
    results = {}
    for cache_seconds in ("600", "0"):
        label = "page cache on" if cache_seconds != "0" else "page cache off"
        server = Server(
            args.port,
            args.workers,
            {**env, "PAGE_CACHE_SECONDS": cache_seconds},
            # As behind the TLS-terminating proxy production runs behind.
            headers={"X-Forwarded-Proto": "https"},
        )
        try:
            subprocess.run(["redis-cli", "-u", args.redis, "flushdb"], check=True, stdout=-3)
            for name, path in paths.items():
                for _ in range(args.workers * 2):  # every worker's connections and caches warm
                    server.get(path)
                result = wrk(server, [path], seconds=args.seconds, script=OUT / "wrk-page.lua")
                results[(label, name)] = result
                print(f"{label:15} {name:34} {result}", flush=True)
                if path == "/robots.txt":
                    continue
                for with_state in (False, True):
                    result, alternated = signed_in_wrk(
                        server, path, cookie, args.seconds, with_state=with_state
                    )
                    views = result.requests_per_second / (2 if alternated else 1)
                    how = "page + state" if alternated else "page alone"
                    results[(label, f"{name}, signed in, {how}")] = result
                    print(
                        f"{label:15} {name + ', signed in':34} {result}  = {views:.1f} page "
                        f"views/s ({how})",
                        flush=True,
                    )
        finally:
            server.stop()
    print("\nratio to /robots.txt measured in the same server run:")
    for (label, name), result in results.items():
        reference = results[(label, "robots.txt (reference)")].requests_per_second
        print(f"{label:15} {name:34} {result.requests_per_second / reference:6.3f}")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
