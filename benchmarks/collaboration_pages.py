"""Server time of pages with a collaboration paper, as a ratio to the same pages without one.

Issue #14 asks that page server times and query counts stay bounded with ~700-author papers.
The query counts are asserted by tests/test_collaboration_pages.py; this measures the time.
On the bundled sample of real arXiv records (papers/sample/, imported into the database first
if it is empty), side by side in one process, requests interleaved:

- the paper page of LHCb's arXiv 1302.1213 (628 authors, the whole byline rendered, folded)
  against the paper page of a one-author paper of the sample (the reference);
- the page of R. Lefèvre, who signs the two LHCb papers of the sample (628 and 622 authors),
  against the page of a researcher who signs two papers of at most three authors (the
  researcher records are made here from the names as written, as matching would link them).

Anonymous GETs through Django's whole stack (middleware, views, templates) with the page cache
off, timed around `Client.get` (no network, no server process: the server's own time). Prints
each page's median and 90th percentile, the ratio of the medians, and each page's queries.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_collab_bench \\
        python benchmarks/collaboration_pages.py --requests 200

Use an empty database (it is migrated and loaded here) or one this script loaded before.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")
# The server's time for the page, not the page cache's (and no debug query log).
os.environ["PAGE_CACHE_SECONDS"] = "0"
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("ALLOWED_HOSTS", "testserver")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Count  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from papers.ingest.importing import snapshot_import  # noqa: E402
from papers.models import Authorship, Paper  # noqa: E402
from researchers.models import Researcher  # noqa: E402
from researchers.names import name_key  # noqa: E402
from researchers.page_figures import researchers_update_stats  # noqa: E402

SAMPLE = ROOT / "papers" / "sample" / "arxiv-sample.jsonl.gz"
LHCB = ("1302.1213", "1302.1072")  # 628 and 622 authors; R. Lefèvre signs both


def ensure_sample() -> None:
    call_command("migrate", verbosity=0)
    if not Paper.objects.filter(arxiv_id__in=LHCB).exists():
        snapshot_import(SAMPLE)


def one_author_papers(count: int) -> list[Paper]:
    """Sample papers with a single author (their records say so), oldest ids first."""
    found = []
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if len(record.get("authors_parsed") or []) == 1 and record.get("abstract"):
                found.append(record["id"])
    papers = list(Paper.objects.filter(arxiv_id__in=found).order_by("arxiv_id")[:count])
    if len(papers) < count:
        sys.exit("the sample has too few one-author papers")
    return papers


def short_paper_author() -> list[Authorship]:
    """A name that signs two papers of at most three authors each (the reference
    researcher's), as matching would attach them: their authorships."""
    sizes = dict(
        Paper.objects.annotate(n=Count("authorships")).filter(n__lte=3).values_list("pk", "n")
    )
    by_name: dict[str, list[Authorship]] = {}
    for authorship in Authorship.objects.filter(paper_id__in=sizes).order_by("pk"):
        by_name.setdefault(name_key(authorship.name), []).append(authorship)
    for authorships in by_name.values():
        if len({a.paper_id for a in authorships}) == 2 and len(authorships) == 2:
            return authorships
    sys.exit("no name signs two short papers of the sample")


def researcher_on(authorships: list[Authorship]) -> Researcher:
    """A researcher record for these authorships, named as they are (made here, in the
    benchmark's database, as matching would make it)."""
    name = authorships[0].name
    researcher, _ = Researcher.objects.get_or_create(
        name_key=name_key(name), defaults={"display_name": name}
    )
    Authorship.objects.filter(pk__in=[a.pk for a in authorships]).update(researcher=researcher)
    researchers_update_stats([researcher.pk])
    researcher.refresh_from_db()
    return researcher


def pages() -> list[tuple[str, str, str, str]]:
    """(page, its url, the reference page, its url) pairs."""
    big = Paper.objects.get(arxiv_id=LHCB[0])
    alone = one_author_papers(1)[0]
    collaborator = researcher_on(
        list(Authorship.objects.filter(paper__arxiv_id__in=LHCB, keyname="Lefèvre"))
    )
    reference = researcher_on(short_paper_author())
    return [
        (
            f"paper, {big.authorships.count()} authors",
            big.get_absolute_url(),
            f"paper, {alone.authorships.count()} author",
            alone.get_absolute_url(),
        ),
        (
            f"researcher, {collaborator.paper_count} papers of 628 and 622 authors",
            collaborator.get_absolute_url(),
            f"researcher, {reference.paper_count} papers of at most 3 authors",
            reference.get_absolute_url(),
        ),
    ]


def timed(client: Client, url: str) -> float:
    started = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        sys.exit(f"{url} answered {response.status_code}")
    return elapsed


def queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        client.get(url)
    return len(captured)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per page")
    args = parser.parse_args()
    ensure_sample()
    pairs = pages()
    client = Client()
    for _, page, _, reference in pairs:
        for url in (page, reference):
            for _ in range(5):  # the first views make analyses, fill caches, load templates
                client.get(url)
    times: dict[str, list[float]] = {}
    for _ in range(args.requests):
        for _, page, _, reference in pairs:
            for url in (page, reference):
                times.setdefault(url, []).append(timed(client, url))
    print(
        f"{Paper.objects.count():,} papers, {connection.vendor}; {args.requests} requests a "
        f"page, interleaved; {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    for name, page, reference_name, reference in pairs:
        for label, url in ((name, page), (reference_name, reference)):
            median = statistics.median(times[url]) * 1000
            p90 = statistics.quantiles(times[url], n=10)[-1] * 1000
            print(
                f"  {label:62} median {median:7.1f} ms  p90 {p90:7.1f} ms  "
                f"{queries(client, url):3} queries"
            )
        ratio = statistics.median(times[page]) / statistics.median(times[reference])
        print(f"  ratio of the medians: {ratio:.2f}")


if __name__ == "__main__":
    main()
