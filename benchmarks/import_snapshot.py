"""Benchmark the snapshot import (papers.ingest.importing.snapshot_import: parse, papers_upsert, and
the search documents built beside the load, as `manage.py import_arxiv_snapshot` does), against
PostgreSQL's COPY of the same rows in the same run.

For each database vendor asked for, on a fresh database (PostgreSQL: a dedicated database that is
created, migrated and dropped; SQLite: a new file), it times a first import of the snapshot and a
rerun of the same file (every record unchanged), and reports records per second and the peak
resident memory of the importing process. `--load-only` leaves the search documents unbuilt, to
time the load by itself. Each vendor runs in its own child process, so peak
memory is that run's alone and Django's settings see that run's DATABASE_URL.

`--engine tantivy` runs the import as production does (SEARCH_ENGINE=tantivy, a fresh index
directory under benchmarks/out/): the import feeds the engine's index itself and commits it
before it returns, so the timed figure includes making every paper searchable there (tantivy's
indexing threads run in the importing process: their CPU counts as the importer's).

The reference (PostgreSQL): the rows the first import writes into papers, their categories and
their authorships, made from the same snapshot by the same parser and written to COPY text
files before the clock starts, then COPY'd (one statement a table, streamed from the files)
into another fresh database migrated to the same schema, timed, before and after the import so
that a change of load on a shared machine shows. The ratio is the import's first run against
the mean of the two, by wall clock and by CPU time (client + PostgreSQL) per record. The load
average of the machine is sampled through every phase and printed beside it.

    python benchmarks/generate_snapshot.py --records 1000000
    python benchmarks/import_snapshot.py benchmarks/out/snapshot-1000000.jsonl.gz \
        --vendor postgres sqlite
    python benchmarks/import_snapshot.py benchmarks/out/snapshot-1000000.jsonl.gz --engine tantivy
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import threading
import time
from datetime import date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SNAPSHOT = ROOT / "benchmarks" / "out" / "snapshot-1000000.jsonl.gz"
DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432"
DEFAULT_DB_NAME = "wovepaper_bench_run"


def peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux (bytes on macOS).
    scale = 1 / 1024 / 1024 if sys.platform == "darwin" else 1 / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def client_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of this process
    return usage.ru_utime + usage.ru_stime


class ServerCpu:
    """CPU time of the PostgreSQL processes serving one database, when the server runs on this
    machine: every backend connected to it (the import uses several connections, some
    short-lived) and autovacuum working on it, found by their process titles in /proc
    ("postgres: ... <user> <database> ...") and sampled twice a second, so that a process that
    has exited still counts with its last sample (a short-lived one may be missed, and up to
    half a second of each one's last work). Other databases on a shared server do not count:
    the whole server's time would measure the other users as well."""

    def __init__(self, database: str, every: float = 0.5) -> None:
        self._marker = f" {database} "
        self._every = every
        self._seen: dict[int, float] = {}  # pid -> CPU seconds at its last sample
        self._other: set[int] = set()  # pids known not to be ours
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._tick = os.sysconf("SC_CLK_TCK")
        self.available = Path("/proc/self/stat").exists()
        self._thread = threading.Thread(target=self._run, name="server-cpu", daemon=True)

    def _sample(self) -> None:
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            if pid in self._other:
                continue
            try:
                if pid not in self._seen:
                    title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                    if not title.startswith(b"postgres:") or self._marker.encode() not in title:
                        self._other.add(pid)
                        continue
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # fields[0] is field 3 of proc(5): utime is 14, stime 15
            with self._lock:
                self._seen[pid] = (int(fields[11]) + int(fields[12])) / self._tick

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            self._sample()

    def seconds(self) -> float | None:
        if not self.available:
            return None
        self._sample()
        with self._lock:
            return sum(self._seen.values())

    def __enter__(self) -> ServerCpu:
        if self.available:
            self._sample()
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


def _django_setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")
    import django

    django.setup()


def run_child(snapshot: Path, batch_size: int | None, load_only: bool, rerun: bool = True) -> dict:
    """Runs inside the child: migrate, import twice, count rows, report as a dict."""
    _django_setup()
    from django.core.management import call_command
    from django.db import connection

    from papers.ingest.importing import snapshot_import
    from papers.models import Authorship, Paper, PaperCategory, PaperSearchDocument

    call_command("migrate", verbosity=0)
    server = ServerCpu(connection.settings_dict["NAME"])
    server.available = server.available and connection.vendor == "postgresql"
    options = {"batch_size": batch_size} if batch_size else {}
    from django.conf import settings

    engine = settings.SEARCH_ENGINE
    result: dict = {
        "vendor": connection.vendor,
        "batch_size": batch_size or "default",
        "mode": "load only" if load_only else f"load + search ({engine})",
    }
    with server:
        for label in ("first", "rerun") if rerun else ("first",):
            print(f"  {connection.vendor}: {label} import", file=sys.stderr, flush=True)
            result[label] = _timed_import(
                server, snapshot_import, snapshot, build_search_index=not load_only, **options
            )
    result["rows"] = {
        "papers": Paper.objects.count(),
        "authorships": Authorship.objects.count(),
        "categories": PaperCategory.objects.count(),
        "search documents": PaperSearchDocument.objects.count(),
    }
    if engine != "database":
        from papers.search import paper_search_backend

        result["rows"]["engine documents"] = paper_search_backend("keyword").document_count()
    return result


def _timed_import(server: ServerCpu, snapshot_import, snapshot: Path, **options) -> dict:
    every = 100_000
    seen = {"n": 0, "next": every}

    def progress(n: int) -> None:
        seen["n"] += n
        if seen["n"] >= seen["next"]:
            rate = seen["n"] / (time.perf_counter() - started)
            print(f"    {seen['n']:>10,} records  {rate:,.0f}/s", file=sys.stderr, flush=True)
            seen["next"] += every

    started = time.perf_counter()
    client_before, server_before = client_cpu_seconds(), server.seconds()
    counts, changed = snapshot_import(snapshot, progress=progress, **options)
    seconds = time.perf_counter() - started
    client_after, server_after = client_cpu_seconds(), server.seconds()
    records = counts.created + counts.updated + counts.unchanged + counts.rejected

    def per_record(after, before, records=records):
        return (after - before) / records * 1e6 if records and after is not None else None

    return {
        "records": records,
        "counts": counts.as_dict(),
        "changed": len(changed),
        "seconds": seconds,
        "per_second": records / seconds if seconds else 0.0,
        "peak_rss_mb": peak_rss_mb(),
        # CPU per record separates our cost from the load other processes put on the
        # machine, which wall-clock rates on a shared box cannot.
        "client_cpu_us": per_record(client_after, client_before),
        "server_cpu_us": per_record(server_after, server_before),
    }


# COPY's text format: backslash, newline, carriage return and tab are escaped, NULL is \N.
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"})


def copy_text(value) -> str:
    if value is None:
        return "\\N"
    if value is True or value is False:
        return "t" if value else "f"
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value).translate(_COPY_ESCAPES)


def copy_tables():
    """(table, columns) of the reference, in load order: what the import's first run writes."""
    from papers.ingest.upsert import (
        _AUTHORSHIP_COPY_FIELDS,
        _CATEGORY_COPY_FIELDS,
        _PAPER_COPY_FIELDS,
        _columns,
    )
    from papers.models import Authorship, Paper, PaperCategory

    return [
        (Paper, _columns(Paper, _PAPER_COPY_FIELDS)),
        (PaperCategory, _columns(PaperCategory, _CATEGORY_COPY_FIELDS)),
        (Authorship, _columns(Authorship, _AUTHORSHIP_COPY_FIELDS)),
    ]


def prepare_copy_files(snapshot: Path, prefix: Path) -> dict[str, Path]:
    """Write the rows of the reference as COPY text files (untimed): the papers of the snapshot
    as its first import stores them (the same parser and the same column values, the last line
    of an id winning), with ids 1..N, their categories and their authorships."""
    from django.utils import timezone

    from papers.ingest.importing import snapshot_batches
    from papers.ingest.upsert import _authorship_values, _paper_values
    from papers.models import Authorship, Paper, PaperCategory

    records = {}
    for batch in snapshot_batches(snapshot, 2000):
        for record in batch.records:
            records.pop(record.arxiv_id, None)  # a later line for the id wins, at its place
            records[record.arxiv_id] = record
    now = timezone.now()
    files = {
        model._meta.db_table: Path(f"{prefix}-{model._meta.db_table}.tsv")
        for model in (Paper, PaperCategory, Authorship)
    }
    handles = {table: path.open("w", encoding="utf-8") for table, path in files.items()}
    try:
        papers = handles[Paper._meta.db_table]
        categories = handles[PaperCategory._meta.db_table]
        authorships = handles[Authorship._meta.db_table]
        for pk, record in enumerate(records.values(), start=1):
            values = _paper_values(record, record.digest())
            values["modified_at"] = now
            row = [pk, *values.values(), now]
            papers.write("\t".join(map(copy_text, row)) + "\n")
            for index, code in enumerate(dict.fromkeys(record.categories)):
                row = [pk, code, index == 0, record.published]
                categories.write("\t".join(map(copy_text, row)) + "\n")
            for position, author in enumerate(record.authors, start=1):
                row = [pk, position, *_authorship_values(author)]
                authorships.write("\t".join(map(copy_text, row)) + "\n")
    finally:
        for handle in handles.values():
            handle.close()
    return files


def run_prepare_child(snapshot: Path, prefix: Path) -> dict:
    """Inside a child: write the reference's files (untimed)."""
    _django_setup()
    started = time.perf_counter()
    files = prepare_copy_files(snapshot, prefix)
    return {
        "files": {t: str(p) for t, p in files.items()},
        "seconds": time.perf_counter() - started,
    }


def run_copy_child(prefix: Path) -> dict:
    """Inside a child, on a fresh database: migrate, then COPY the prepared files, timed (one
    statement a table, each streamed from its file in 1 MB pieces, autocommit)."""
    _django_setup()
    from django.core.management import call_command
    from django.db import connection

    from papers.models import Paper

    call_command("migrate", verbosity=0)
    server = ServerCpu(connection.settings_dict["NAME"]).__enter__()
    rows = {}
    client_before, server_before = client_cpu_seconds(), server.seconds()
    started = time.perf_counter()
    with connection.cursor() as cursor:
        for model, columns in copy_tables():
            table = model._meta.db_table
            with (
                cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
                Path(f"{prefix}-{table}.tsv").open("rb") as source,
            ):
                while chunk := source.read(1 << 20):
                    copy.write(chunk)
            rows[table] = cursor.rowcount
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)",
            [Paper._meta.db_table, rows[Paper._meta.db_table]],
        )
    seconds = time.perf_counter() - started
    client_after, server_after = client_cpu_seconds(), server.seconds()
    server.__exit__()
    papers = rows[Paper._meta.db_table]
    return {
        "rows": rows,
        "records": papers,
        "seconds": seconds,
        "per_second": papers / seconds,
        "client_cpu_us": (client_after - client_before) / papers * 1e6,
        "server_cpu_us": (server_after - server_before) / papers * 1e6
        if server_after is not None and server_before is not None
        else None,
    }


class LoadSampler:
    """The machine's 1-minute load average, sampled every few seconds while a phase runs."""

    def __init__(self, every: float = 5.0) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._every = every
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(self._every):
                return

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])

    def summary(self) -> dict:
        samples = self.samples or [os.getloadavg()[0]]
        return {
            "min": min(samples),
            "mean": sum(samples) / len(samples),
            "max": max(samples),
        }


def _pg_admin(server: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(sql)


def _index_dir(name: str) -> Path:
    return ROOT / "benchmarks" / "out" / f"{name}-search-index"


def _fresh_database(vendor: str, args: argparse.Namespace, name: str) -> dict[str, str]:
    env = dict(os.environ)
    env["SEARCH_ENGINE"] = args.engine
    if args.engine != "database":
        shutil.rmtree(_index_dir(name), ignore_errors=True)
        env["SEARCH_INDEX_DIR"] = str(_index_dir(name))
    if vendor == "postgres":
        _pg_admin(args.server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        _pg_admin(args.server, f'CREATE DATABASE "{name}"')
        env["DATABASE_URL"] = f"{args.server}/{name}"
    else:
        path = _sqlite_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        _sqlite_remove(path)
        env["DATABASE_URL"] = f"sqlite:///{path}"
    return env


def _drop_database(vendor: str, args: argparse.Namespace, name: str) -> None:
    if args.keep:
        return
    shutil.rmtree(_index_dir(name), ignore_errors=True)
    if vendor == "postgres":
        _pg_admin(args.server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        _sqlite_remove(_sqlite_path(name))


def _sqlite_path(name: str) -> Path:
    return ROOT / "benchmarks" / "out" / f"{name}.sqlite3"


def _sqlite_remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _child(args: list[str], env: dict[str, str]) -> dict:
    completed = subprocess.run(
        [sys.executable, __file__, *args], env=env, stdout=subprocess.PIPE, text=True, check=True
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def run_vendor(vendor: str, args: argparse.Namespace) -> dict:
    """Parent side: prepare a fresh database, run the child, clean up."""
    env = _fresh_database(vendor, args, args.db_name)
    try:
        extra = ["--batch-size", str(args.batch_size)] if args.batch_size else []
        extra += ["--load-only"] if args.load_only else []
        extra += ["--no-rerun"] if args.no_rerun else []
        with LoadSampler() as load:
            result = _child(["--child", str(args.snapshot), *extra], env)
        result["load"] = load.summary()
        return result
    finally:
        _drop_database(vendor, args, args.db_name)


def run_copy(args: argparse.Namespace, prefix: Path) -> dict:
    """One timed COPY of the prepared files into a fresh, migrated database."""
    name = f"{args.db_name}_copy"
    env = _fresh_database("postgres", args, name)
    try:
        with LoadSampler() as load:
            result = _child(["--child-copy", str(prefix)], env)
        result["load"] = load.summary()
        return result
    finally:
        _drop_database("postgres", args, name)


def run_with_reference(args: argparse.Namespace) -> dict:
    """PostgreSQL: COPY reference, import (first and rerun), COPY reference again."""
    prefix = ROOT / "benchmarks" / "out" / f"{args.db_name}-copy"
    print("postgres: COPY reference: writing its rows (untimed)", file=sys.stderr, flush=True)
    prepared = _child([str(args.snapshot), "--child-prepare", str(prefix)], dict(os.environ))
    try:
        print("postgres: COPY reference, before the import", file=sys.stderr, flush=True)
        before = run_copy(args, prefix)
        print("postgres: fresh database, migrate, import twice", file=sys.stderr, flush=True)
        result = run_vendor("postgres", args)
        print("postgres: COPY reference, after the import", file=sys.stderr, flush=True)
        after = run_copy(args, prefix)
    finally:
        for path in prepared["files"].values():
            Path(path).unlink(missing_ok=True)
    result["copy"] = [before, after]
    return result


def print_table(results: list[dict], snapshot: Path) -> None:
    print()
    print(f"snapshot: {snapshot} ({snapshot.stat().st_size / 1e6:,.0f} MB)")
    print(
        f"machine:  {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}"
    )
    header = (
        f"{'database':<11}{'run':<7}{'what':<21}{'records':>10}{'time':>9}"
        f"{'records/s':>11}{'peak RSS':>11}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        for label in ("first", "rerun"):
            if label not in r:
                continue
            p = r[label]
            print(
                f"{r['vendor']:<11}{label:<7}{r['mode']:<21}{p['records']:>10,}"
                f"{p['seconds']:>8.1f}s{p['per_second']:>11,.0f}{p['peak_rss_mb']:>8,.0f} MB"
            )
        for label, c in zip(("before", "after"), r.get("copy", []), strict=False):
            print(
                f"{'COPY':<11}{label:<7}{'reference':<21}{c['records']:>10,}"
                f"{c['seconds']:>8.1f}s{c['per_second']:>11,.0f}"
            )
    _print_cpu(results)
    _print_load_and_ratios(results)


def _print_cpu(results: list[dict]) -> None:
    print()
    print("CPU time per record (importing process, all threads / PostgreSQL, its database's):")

    def us(value):
        return f"{value:>6,.0f} us" if value is not None else "   n/a (in-process)"

    for r in results:
        for label in ("first", "rerun"):
            if label not in r:
                continue
            p = r[label]
            print(
                f"  {r['vendor']:<11}{label:<7}client {us(p['client_cpu_us'])}"
                f"   server {us(p['server_cpu_us'])}"
            )
        for label, c in zip(("before", "after"), r.get("copy", []), strict=False):
            print(
                f"  {'COPY':<11}{label:<7}client {us(c['client_cpu_us'])}"
                f"   server {us(c['server_cpu_us'])}"
            )


def _print_load_and_ratios(results: list[dict]) -> None:
    print()
    print("load average (1 min) during each phase, min / mean / max:")
    for r in results:
        phases = [(r["vendor"], r["load"])]
        phases += [
            (f"COPY {label}", c["load"])
            for label, c in zip(("before", "after"), r.get("copy", []), strict=False)
        ]
        for name, load in phases:
            print(f"  {name:<13}{load['min']:>6.1f} / {load['mean']:>5.1f} / {load['max']:>5.1f}")
    for r in results:
        if not r.get("copy"):
            continue
        first = r["first"]
        copies = r["copy"]
        copy_rate = sum(c["per_second"] for c in copies) / len(copies)
        copy_cpu = [
            c["client_cpu_us"] + c["server_cpu_us"]
            for c in copies
            if c["server_cpu_us"] is not None
        ]
        print()
        print(
            f"first import against COPY of the same rows ({r['mode']}): "
            f"{first['per_second']:,.0f} / {copy_rate:,.0f} records/s = "
            f"{first['per_second'] / copy_rate:.3f}x by wall clock"
        )
        if copy_cpu and first["server_cpu_us"] is not None:
            mine = first["client_cpu_us"] + first["server_cpu_us"]
            theirs = sum(copy_cpu) / len(copy_cpu)
            print(f"  by CPU: {theirs:,.0f} us / {mine:,.0f} us a record = {theirs / mine:.3f}x")
        print(f"  COPY rows: {copies[0]['rows']}")
    print()
    for r in results:
        rerun = f", rerun {r['rerun']['counts']}" if "rerun" in r else ""
        print(f"{r['vendor']}: first {r['first']['counts']}{rerun}, rows {r['rows']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("snapshot", type=Path, nargs="?", default=DEFAULT_SNAPSHOT)
    parser.add_argument("--vendor", nargs="+", choices=["postgres", "sqlite"], default=["postgres"])
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="records per upsert batch (default: snapshot_import's)",
    )
    parser.add_argument(
        "--server", default=DEFAULT_SERVER, help="PostgreSQL server URL without a database name"
    )
    parser.add_argument(
        "--db-name",
        default=DEFAULT_DB_NAME,
        help="database of the import (the COPY reference uses this name + '_copy')",
    )
    parser.add_argument("--keep", action="store_true", help="keep the databases afterwards")
    parser.add_argument(
        "--engine",
        choices=["database", "tantivy"],
        default="database",
        help="SEARCH_ENGINE of the import: the database's own search documents, or tantivy's "
        "index (production's), fed by the import itself",
    )
    parser.add_argument(
        "--load-only",
        action="store_true",
        help="time the load alone: leave the search documents unbuilt",
    )
    parser.add_argument(
        "--no-rerun", action="store_true", help="time the first import only, not a rerun"
    )
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the COPY reference (PostgreSQL)"
    )
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-prepare", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-copy", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(
            json.dumps(run_child(args.snapshot, args.batch_size, args.load_only, not args.no_rerun))
        )
        return 0
    if args.child_prepare:
        print(json.dumps(run_prepare_child(args.snapshot, args.child_prepare)))
        return 0
    if args.child_copy:
        print(json.dumps(run_copy_child(args.child_copy)))
        return 0
    if not args.snapshot.exists():
        parser.error(
            f"{args.snapshot}: no such file; make one with "
            "python benchmarks/generate_snapshot.py --records N"
        )
    results = []
    for vendor in args.vendor:
        if vendor == "postgres" and not args.no_reference:
            results.append(run_with_reference(args))
        else:
            print(f"{vendor}: fresh database, migrate, import twice", file=sys.stderr, flush=True)
            results.append(run_vendor(vendor, args))
    print_table(results, args.snapshot)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
