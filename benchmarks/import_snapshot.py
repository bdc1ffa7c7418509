"""Benchmark the snapshot import (papers.importing.snapshot_import: parse, papers_upsert, and
the search documents built beside the load, as `manage.py import_arxiv_snapshot` does).

For each database vendor asked for, on a fresh database (PostgreSQL: a dedicated database that is
created, migrated and dropped; SQLite: a new file), it times a first import of the snapshot and a
rerun of the same file (every record unchanged), and reports records per second and the peak
resident memory of the importing process. `--load-only` leaves the search documents unbuilt, to
time the load by itself. Each vendor runs in its own child process, so peak
memory is that run's alone and Django's settings see that run's DATABASE_URL.

    python benchmarks/generate_snapshot.py --records 1000000
    python benchmarks/import_snapshot.py benchmarks/out/snapshot-1000000.jsonl.gz \
        --vendor postgres sqlite
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
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


def server_cpu_seconds(pid: int | None) -> float | None:
    """CPU time of the whole PostgreSQL server, when it runs on this machine: its live
    processes plus what its exited children (closed connections) used. The search index stage
    works over several connections, so one backend's time would not tell."""
    if pid is None:
        return None
    try:
        postmaster = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        total = 0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            # fields[0] is field 3 of proc(5): ppid is 4, utime 14, stime 15, cutime 16, cstime 17
            if entry.name == str(postmaster):
                total += int(fields[13]) + int(fields[14])  # children that have exited
            elif int(fields[1]) == postmaster:
                total += int(fields[11]) + int(fields[12])
    except OSError:
        return None
    return total / os.sysconf("SC_CLK_TCK")


def run_child(snapshot: Path, batch_size: int | None, load_only: bool) -> dict:
    """Runs inside the child: migrate, import twice, count rows, report as a dict."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from papers.importing import snapshot_import
    from papers.models import Authorship, Paper, PaperCategory, PaperSearchDocument

    call_command("migrate", verbosity=0)
    backend_pid = None
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend_pid = cursor.fetchone()[0]
    options = {"batch_size": batch_size} if batch_size else {}
    result: dict = {
        "vendor": connection.vendor,
        "batch_size": batch_size or "default",
        "mode": "load only" if load_only else "load + search index",
    }
    progress_every = 100_000
    seen = {"n": 0, "next": progress_every, "t0": 0.0}

    def progress(n: int) -> None:
        seen["n"] += n
        if seen["n"] >= seen["next"]:
            rate = seen["n"] / (time.perf_counter() - seen["t0"])
            print(f"    {seen['n']:>10,} records  {rate:,.0f}/s", file=sys.stderr, flush=True)
            seen["next"] += progress_every

    for label in ("first", "rerun"):
        print(f"  {connection.vendor}: {label} import", file=sys.stderr, flush=True)
        seen.update(n=0, next=progress_every, t0=time.perf_counter())
        started = time.perf_counter()
        client_before, server_before = client_cpu_seconds(), server_cpu_seconds(backend_pid)
        counts, changed = snapshot_import(
            snapshot, progress=progress, build_search_index=not load_only, **options
        )
        seconds = time.perf_counter() - started
        client_after, server_after = client_cpu_seconds(), server_cpu_seconds(backend_pid)
        records = counts.created + counts.updated + counts.unchanged + counts.rejected

        def per_record(after, before, records=records):
            return (after - before) / records * 1e6 if records and after is not None else None

        result[label] = {
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
        del changed
    result["rows"] = {
        "papers": Paper.objects.count(),
        "authorships": Authorship.objects.count(),
        "categories": PaperCategory.objects.count(),
        "search documents": PaperSearchDocument.objects.count(),
    }
    return result


def _pg_admin(server: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(sql)


def run_vendor(vendor: str, args: argparse.Namespace) -> dict:
    """Parent side: prepare a fresh database, run the child, clean up."""
    env = dict(os.environ)
    sqlite_path = ROOT / "benchmarks" / "out" / f"{args.db_name}.sqlite3"
    if vendor == "postgres":
        _pg_admin(args.server, f'DROP DATABASE IF EXISTS "{args.db_name}" WITH (FORCE)')
        _pg_admin(args.server, f'CREATE DATABASE "{args.db_name}"')
        env["DATABASE_URL"] = f"{args.server}/{args.db_name}"
    else:
        sqlite_path.parent.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{sqlite_path}{suffix}").unlink(missing_ok=True)
        env["DATABASE_URL"] = f"sqlite:///{sqlite_path}"
    try:
        extra = ["--batch-size", str(args.batch_size)] if args.batch_size else []
        extra += ["--load-only"] if args.load_only else []
        completed = subprocess.run(
            [sys.executable, __file__, "--child", str(args.snapshot), *extra],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            check=True,
        )
    finally:
        if not args.keep:
            if vendor == "postgres":
                _pg_admin(args.server, f'DROP DATABASE IF EXISTS "{args.db_name}" WITH (FORCE)')
            else:
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{sqlite_path}{suffix}").unlink(missing_ok=True)
    return json.loads(completed.stdout.strip().splitlines()[-1])


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
            p = r[label]
            print(
                f"{r['vendor']:<11}{label:<7}{r['mode']:<21}{p['records']:>10,}"
                f"{p['seconds']:>8.1f}s{p['per_second']:>11,.0f}{p['peak_rss_mb']:>8,.0f} MB"
            )
    print()
    print("CPU time per record (importing process, all threads / PostgreSQL, all backends):")

    def us(value):
        return f"{value:>6,.0f} us" if value is not None else "   n/a (in-process)"

    for r in results:
        for label in ("first", "rerun"):
            p = r[label]
            print(
                f"  {r['vendor']:<11}{label:<7}client {us(p['client_cpu_us'])}"
                f"   server {us(p['server_cpu_us'])}"
            )
    print()
    for r in results:
        print(
            f"{r['vendor']}: first {r['first']['counts']}, rerun {r['rerun']['counts']}, "
            f"rows {r['rows']}"
        )


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
    parser.add_argument("--db-name", default=DEFAULT_DB_NAME)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument(
        "--load-only",
        action="store_true",
        help="time the load alone: leave the search documents unbuilt",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_child(args.snapshot, args.batch_size, args.load_only)))
        return 0
    if not args.snapshot.exists():
        parser.error(
            f"{args.snapshot}: no such file; make one with "
            "python benchmarks/generate_snapshot.py --records N"
        )
    results = []
    for vendor in args.vendor:
        print(f"{vendor}: fresh database, migrate, import twice", file=sys.stderr, flush=True)
        results.append(run_vendor(vendor, args))
    print_table(results, args.snapshot)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
