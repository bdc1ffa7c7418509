"""Harvest throughput: OAI-PMH ListRecords pages on local disk to rows in the database.

Replays the three real 1,000-record pages in tests/fixtures/arxiv-oai/ (two `arXiv`, one
`arXivRaw`) --repeat times under distinct synthetic arXiv ids (9000.00001 and up: arXiv will not
reach year-month 9000 for decades), writes them to a temporary directory, then measures:

  parse only   read each file and parse it into PaperRecords (papers.harvest.oai)
  end to end   read, parse, and ingest each page exactly as a harvest does
               (papers.harvest.runs.harvest_page_ingest: papers_upsert + checkpoint, one
               transaction per page)
  rerun        the same pages again: every record unchanged (the idempotent path)
  search index the search documents of the harvested papers (papers.search.postgres_documents),
               which a harvest hands to a worker through the broker after each page
  searchable   the harvester loop with a real Celery worker (another process) indexing each
               page as it lands, timed until the last paper is searchable

As in production, each page's papers go to the search index and to matching through a Celery
broker: Redis database 15 on 127.0.0.1 (BENCHMARK_BROKER_URL to change it), emptied afterwards;
the index stage is then timed on its own. Run against the database in DATABASE_URL (it is
migrated first; the synthetic papers are deleted before and after):

  DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_harvest \\
      python benchmarks/harvest.py --repeat 10
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")
BROKER_URL = os.environ.get("BENCHMARK_BROKER_URL", "redis://127.0.0.1:6379/15")
os.environ["CELERY_BROKER_URL"] = BROKER_URL

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from papers.harvest.oai import ResumptionToken, parse_list_records  # noqa: E402
from papers.harvest.runs import (  # noqa: E402
    harvest_page_ingest,
    harvest_run_create,
    harvest_run_execute,
)
from papers.models import HarvestRun, Paper, PaperSearchDocument  # noqa: E402
from papers.search.postgres_documents import search_index_pending  # noqa: E402

PAGES = [
    ("listrecords_arXiv_2013-05-24_token_436115-4001.xml", "arXiv"),
    ("listrecords_arXiv_2013-05-25_token_436115-405001.xml", "arXiv"),
    ("listrecords_arXivRaw_2014-01-16_token_496549-46001.xml", "arXivRaw"),
]
FIXTURES = ROOT / "tests" / "fixtures" / "arxiv-oai"
SYNTHETIC = r"^9[0-9]{3}\.[0-9]{5}$"
ID_PATTERN = re.compile(rb"(<identifier>oai:arXiv\.org:|<id>)([^<]+)(</identifier>|</id>)")


def write_pages(directory: Path, repeat: int) -> list[tuple[Path, str]]:
    """Write repeat x 3 pages whose records carry ids 9000.00001, 9000.00002, ..."""
    originals = [((FIXTURES / name).read_bytes(), prefix) for name, prefix in PAGES]
    files = []
    for rep in range(repeat):
        serial = 0
        for index, (body, prefix) in enumerate(originals):
            mapping: dict[bytes, bytes] = {}

            def synthetic(match, mapping=mapping, rep=rep):
                nonlocal serial
                old = match.group(2)
                if old not in mapping:
                    serial += 1
                    mapping[old] = f"{9000 + rep}.{serial:05d}".encode()
                return match.group(1) + mapping[old] + match.group(3)

            path = directory / f"page-{rep:04d}-{index}.xml"
            path.write_bytes(ID_PATTERN.sub(synthetic, body))
            files.append((path, prefix))
    return files


def clean() -> None:
    Paper.objects.filter(arxiv_id__regex=SYNTHETIC).delete()
    HarvestRun.objects.filter(set_spec="benchmark").delete()
    import redis

    try:
        redis.Redis.from_url(BROKER_URL).flushdb()  # the tasks the pages sent, never consumed
    except redis.RedisError:
        pass


def index_stage() -> None:
    started = time.perf_counter()
    documents = search_index_pending()
    seconds = time.perf_counter() - started
    if documents:
        print(
            f"{'search index (all cores)':29s}: {documents:7d} documents in {seconds:6.2f}s = "
            f"{documents / seconds:8.0f} documents/s wall"
        )


def server_cpu_seconds() -> float | None:
    """CPU time used so far by this connection's PostgreSQL backend (same machine only)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def parse_only(files) -> tuple[int, float, float]:
    records = 0
    started, cpu = time.perf_counter(), time.process_time()
    for path, prefix in files:
        records += len(parse_list_records(path.read_bytes(), metadata_prefix=prefix).records)
    return records, time.perf_counter() - started, time.process_time() - cpu


def end_to_end(files) -> tuple[int, float, float, dict, float, float | None]:
    run = harvest_run_create(set_spec="benchmark", metadata_prefix="arXivRaw")
    records = 0
    parse_seconds = 0.0
    server_before = server_cpu_seconds()
    cpu = time.process_time()
    started = time.perf_counter()
    for path, prefix in files:
        t0 = time.perf_counter()
        page = parse_list_records(path.read_bytes(), metadata_prefix=prefix)
        parse_seconds += time.perf_counter() - t0
        harvest_page_ingest(run, page)
        records += len(page.records)
    elapsed = time.perf_counter() - started
    client_cpu = time.process_time() - cpu
    server_after = server_cpu_seconds()
    server_cpu = server_after - server_before if server_before is not None else None
    run.refresh_from_db()
    counts = {
        "created": run.created,
        "updated": run.updated,
        "unchanged": run.unchanged,
        "rejected": run.rejected,
    }
    return records, elapsed, parse_seconds, counts, client_cpu, server_cpu


class DiskPages:
    """Stands in for the OAI-PMH client: page i+1 is the next file on disk."""

    def __init__(self, files):
        self.files = files

    def list_records_page(self, *, resumption_token: str = "", **window):
        index = int(resumption_token) if resumption_token else 0
        path, prefix = self.files[index]
        page = parse_list_records(path.read_bytes(), metadata_prefix=prefix)
        more = index + 1 < len(self.files)
        page.token = ResumptionToken(value=str(index + 1) if more else "")
        return page


def through_harvester(files) -> tuple[int, float, float, dict, float, float | None]:
    """The harvester's own loop (harvest_run_execute: fetch+parse of the next page in a
    background thread while the current one is written), pages read from disk."""
    run = harvest_run_create(set_spec="benchmark", metadata_prefix="arXivRaw")
    server_before = server_cpu_seconds()
    cpu = time.process_time()
    started = time.perf_counter()
    harvest_run_execute(run, client=DiskPages(files))
    elapsed = time.perf_counter() - started
    client_cpu = time.process_time() - cpu
    server_after = server_cpu_seconds()
    server_cpu = server_after - server_before if server_before is not None else None
    records = run.created + run.updated + run.unchanged
    counts = {
        "created": run.created,
        "updated": run.updated,
        "unchanged": run.unchanged,
        "rejected": run.rejected,
    }
    return records, elapsed, float("nan"), counts, client_cpu, server_cpu


def searchable_with_worker(files) -> None:
    """The harvester loop while a Celery worker process consumes the index tasks, as in
    production; timed from the first page to the last search document."""
    from wovepaper.celery import app

    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "wovepaper",
            "worker",
            "-Q",
            "default",
            "--pool",
            "solo",
            "--loglevel",
            "ERROR",
            "--without-heartbeat",
            "--without-mingle",
            "--without-gossip",
        ],
        cwd=ROOT,
        env={**os.environ, "CELERY_BROKER_URL": BROKER_URL},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,  # its banner; failure is below
    )
    try:
        deadline = time.monotonic() + 60
        while not app.control.inspect(timeout=1).ping():
            if time.monotonic() > deadline or worker.poll() is not None:
                raise SystemExit("the Celery worker did not start")
        pending = PaperSearchDocument.objects.filter(paper__arxiv_id__regex=SYNTHETIC)
        cpu = time.process_time()
        started = time.perf_counter()
        run = harvest_run_create(set_spec="benchmark", metadata_prefix="arXivRaw")
        harvest_run_execute(run, client=DiskPages(files))
        written = time.perf_counter() - started
        records = run.created + run.updated + run.unchanged
        while pending.count() < records:
            time.sleep(0.05)
        seconds = time.perf_counter() - started
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    print(
        f"{'searchable, worker indexing':29s}: {records:7d} records in {seconds:6.2f}s = "
        f"{records / seconds:8.0f} records/s wall (all written after {written:.2f}s; "
        f"harvester CPU {time.process_time() - cpu:.2f}s)"
    )


def report(
    label: str,
    records: int,
    seconds: float,
    parse_s: float,
    counts: dict,
    client_cpu: float,
    server_cpu: float | None,
) -> None:
    cpu = client_cpu + (server_cpu or 0)
    parse_note = (
        "parsing overlapped with writing"
        if parse_s != parse_s
        else f"parse {parse_s:.2f}s of the wall time"
    )
    server = f" + database server {server_cpu:.2f}s" if server_cpu is not None else ""
    print(
        f"{label}: {records:7d} records in {seconds:6.2f}s = {records / seconds:8.0f} records/s"
        f" wall; CPU: harvester {client_cpu:.2f}s{server} = {records / cpu:6.0f} records per "
        f"CPU-second  ({parse_note}; {counts})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat", type=int, default=10, help="replays of the three pages (3,000 records each)"
    )
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    clean()
    with tempfile.TemporaryDirectory() as tmp:
        files = write_pages(Path(tmp), args.repeat)
        print(
            f"{len(files)} pages on disk, {connection.vendor} "
            f"({connection.settings_dict['NAME']}), {os.cpu_count()} CPUs"
        )
        n, seconds, cpu = parse_only(files)
        print(
            f"{'parse only':29s}: {n:7d} records in {seconds:6.2f}s = "
            f"{n / seconds:8.0f} records/s wall; CPU {cpu:.2f}s = {n / cpu:6.0f} records "
            "per CPU-second"
        )
        try:
            report("end to end, sequential       ", *end_to_end(files))
            index_stage()
            report("rerun (all unchanged)        ", *end_to_end(files))
            clean()
            report("end to end, harvester loop   ", *through_harvester(files))
            index_stage()
            clean()
            searchable_with_worker(files)
        finally:
            clean()


if __name__ == "__main__":
    main()
