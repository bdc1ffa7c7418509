"""Embedding throughput as deployed: the Procfile's `embed` line run as a real Celery worker with
1, then 2 processes, a `search` worker writing the vector index, and beat's one
`papers.embed_pending` message draining the pending papers; beside it, in the same run, the
reference: the encoder alone (one process, one thread, model loaded, no database, no queue) over
the same papers' texts, and two such processes at once (what this machine's cores give two
processes at best).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_embed_bench \\
        python benchmarks/embedding.py [--papers 1000] [--workers 1,2]

The database is migrated and given the bundled sample (3,200 real arXiv papers) with the demo's
vectors; `--papers` of them, a seeded draw spread over the id range, have their vectors removed
before each round, so each round's sweep walks the whole table as a deployment's does. The
workers take their settings from the environment as in production (a Redis broker, a queue
prefix of their own, the Procfile's EMBEDDING_THREADS=1, every other setting its default); the ONNX
model is exported first into a fresh directory, timed: what a new machine's first embedding
costs. Printed: papers/s and papers per CPU-second (the workers' processes, from /proc), each
against the reference; then all of arXiv's time on 8, 32 and 128 cores projected from the
measured rates (a projection: more machines were not measured, nor a database under 128
workers' writes).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

from benchmarks.semantic import DEMO_VECTORS, SAMPLE, _run_processes, load  # noqa: E402

ARCHIVE = 2_600_000
CORES = (8, 32, 128)
SEED = 34


def procfile_line(name: str) -> str:
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return line.split(":", 1)[1].strip()
    raise SystemExit(f"Procfile has no {name} line")


class Worker:
    """A Procfile line run by bash, as honcho or foreman run it, in a process group of its own."""

    def __init__(self, name: str, command: str, env: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                ["bash", "-c", command],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 120
        while b" ready." not in log.read_bytes():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit(f"{name} did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)

    def cpu_seconds(self) -> float:
        """User and system time of every process of the worker (bash, celery, its children)."""
        total = 0.0
        root = psutil.Process(self.process.pid)
        for process in [root, *root.children(recursive=True)]:
            try:
                times = process.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
        return total

    def processes(self) -> int:
        root = psutil.Process(self.process.pid)
        tree = [root, *root.children(recursive=True)]
        return sum(1 for p in tree if "celery" in " ".join(p.cmdline()))

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)


def prepare_database(papers: int) -> list[int]:
    """The sample with the demo's vectors; returns the ids of the `papers` drawn to embed."""
    from django.core.management import call_command

    from papers.ingest.importing import snapshot_import
    from papers.models import Paper
    from papers.search.embedding_stage import embeddings_load

    call_command("migrate", verbosity=0)
    if Paper.objects.count() < 3200:
        snapshot_import(SAMPLE, batch_size=500)
    embeddings_load(DEMO_VECTORS)
    ids = sorted(Paper.objects.filter(is_deleted=False).values_list("pk", flat=True))
    return sorted(random.Random(SEED).sample(ids, min(papers, len(ids))))


def texts_of(ids: list[int]) -> list[str]:
    from papers.models import Paper
    from papers.search.embedding_stage import paper_text

    rows = dict(Paper.objects.filter(pk__in=ids).values_list("pk", "title"))
    abstracts = dict(Paper.objects.filter(pk__in=ids).values_list("pk", "abstract"))
    return [paper_text(rows[pk], abstracts[pk]) for pk in ids]


def first_embedding(model_dir: Path) -> tuple[float, float]:
    """Wall and CPU seconds of a first encode on a machine without the model's ONNX file."""
    command = [
        sys.executable,
        "-c",
        "import time, django; django.setup(); "
        "from wovepaper.lib.embeddings import text_encoder; "
        "w, c = time.perf_counter(), time.process_time(); text_encoder().encode(['first']); "
        "print(time.perf_counter() - w, time.process_time() - c)",
    ]
    env = {**os.environ, "EMBEDDING_MODEL_DIR": str(model_dir), "EMBEDDING_THREADS": "1"}
    out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    wall, cpu = (float(x) for x in out.stdout.split()[-2:])
    return wall, cpu


def sweep_round(processes: int, ids: list[int], env: dict[str, str], out: Path) -> dict:
    """Remove the drawn papers' vectors, start the workers, send beat's message, wait."""
    from celery import Celery

    from papers.models import PaperEmbedding, PaperEmbeddingClaim
    from papers.search import PAPERS
    from wovepaper.lib.embeddings import text_encoder
    from wovepaper.lib.search.vectors import UsearchBackend

    prefix = f"bench-{uuid.uuid4().hex[:8]}-"
    index_dir = out / f"vector-index-{processes}"
    shutil.rmtree(index_dir, ignore_errors=True)
    PaperEmbedding.objects.filter(paper_id__in=ids).delete()
    PaperEmbeddingClaim.objects.all().delete()
    env = {
        **env,
        "CELERY_QUEUE_PREFIX": prefix,
        "EMBED_CONCURRENCY": str(processes),
        "VECTOR_ENGINE": "usearch",
        "VECTOR_INDEX_DIR": str(index_dir),
    }
    search = Worker("search", procfile_line("search"), env, out / f"search-{processes}.log")
    embed = Worker("embed", procfile_line("embed"), env, out / f"embed-{processes}.log")
    try:
        assert embed.processes() == processes + 1, "the pool is not what was asked"
        sender = Celery(broker=env["CELERY_BROKER_URL"], set_as_current=False)
        cpu, search_cpu = embed.cpu_seconds(), search.cpu_seconds()
        started = time.perf_counter()
        sender.send_task("papers.embed_pending", queue=f"{prefix}embed")
        while PaperEmbedding.objects.filter(paper_id__in=ids).count() < len(ids):
            if time.perf_counter() - started > 3600:
                raise SystemExit(f"not done in an hour; see {embed.log}")
            time.sleep(0.2)
        wall = time.perf_counter() - started
        cpu = embed.cpu_seconds() - cpu
        source = PAPERS.vectors
        assert source is not None
        index = UsearchBackend(PAPERS, source, directory=index_dir, encoder=text_encoder())
        deadline = time.monotonic() + 120
        while index.size() < len(ids):
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        search_cpu = search.cpu_seconds() - search_cpu
        sender.close()
    finally:
        embed.stop()
        search.stop()
    log = embed.log.read_text()
    written = sum(int(n) for n in re.findall(r"succeeded in [^:]*: \{'embedded': (\d+)", log))
    # The share of the round the processes spent in a task: 1.0 when the chains kept every
    # process fed, whatever share of a core the machine gave each.
    durations = re.findall(r"embed_pending\[[^\]]+\] succeeded in ([\d.]+)s", log)
    occupied = sum(float(t) for t in durations) / (processes * wall)
    return {
        "processes": processes,
        "wall": wall,
        "cpu": cpu,
        "search_cpu": search_cpu,
        "written": written,
        "batches": len(re.findall(r"papers\.embed_pending\[[^\]]+\] succeeded", log)),
        "indexed": index.size(),
        "occupied": occupied,
        "load": load(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("DATABASE_URL must name a PostgreSQL database (it is migrated and filled)")

    import django

    django.setup()

    out = Path(tempfile.mkdtemp(prefix="embedding-bench-"))
    model_dir = out / "models"
    print(f"{os.cpu_count()} CPUs, {load()}")
    wall, cpu = first_embedding(model_dir)
    print(
        f"first embedding on a machine without the model: {wall:.1f} s ({cpu:.1f} s of CPU): "
        f"the ONNX export and int8 quantisation of the bundled weights into {model_dir.name}/"
    )
    wall, cpu = first_embedding(model_dir)
    print(f"first embedding of a new process once exported: {wall:.1f} s ({cpu:.1f} s of CPU)")

    ids = prepare_database(args.papers)
    texts = texts_of(ids)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CELERY_")},
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        # A Redis database of its own: a test run that empties the suite's (4) would take the
        # queued batches with it.
        "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/8"),
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/8"),
        "EMBEDDING_MODEL_DIR": str(model_dir),
        "EMBED_AFTER_WRITES": "0",
        "LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
    }
    os.environ["EMBEDDING_MODEL_DIR"] = str(model_dir)
    print(f"{len(texts)} of the sample's real papers to embed, {load()}")

    def alone(processes: int) -> tuple[float, float]:
        runs = _run_processes(texts, processes)
        papers = sum(r[0] for r in runs)
        return papers / max(r[1] for r in runs), papers / sum(r[2] for r in runs)

    # The reference before and after the rounds: the machine's load drifts (shared cores).
    before, before_cpu = alone(1)
    print(
        f"reference, the encoder alone (1 process, 1 thread), before: {before:.1f} papers/s, "
        f"{before_cpu:.1f} per CPU-second ({load()})"
    )
    pair, pair_cpu = alone(2)
    print(
        f"the encoder alone in 2 processes at once: {pair:.1f} papers/s "
        f"({pair / before:.2f}x), {pair_cpu:.1f} per CPU-second ({load()})"
    )
    rows = [sweep_round(int(n), ids, env, out) for n in args.workers.split(",")]
    after, after_cpu = alone(1)
    print(
        f"reference again, after: {after:.1f} papers/s, {after_cpu:.1f} per CPU-second ({load()})"
    )
    reference, reference_cpu = (before + after) / 2, (before_cpu + after_cpu) / 2
    for row in rows:
        rate = len(ids) / float(row["wall"])
        per_cpu = len(ids) / float(row["cpu"])
        print(
            f"Procfile embed worker, {row['processes']} process(es): {rate:.1f} papers/s "
            f"({rate / reference:.2f}x the reference's mean), {per_cpu:.1f} per CPU-second "
            f"({per_cpu / reference_cpu:.2f}x); {float(row['cpu']) / float(row['wall']):.2f} "
            f"cores busy, the processes in a task {float(row['occupied']):.0%} of the time; "
            f"{row['wall']:.0f} s, {row['batches']} batches, {row['written']} "
            f"vectors written for {len(ids)} papers, {row['indexed']} in the vector index; "
            f"search worker {row['search_cpu']:.1f} CPU-s ({row['load']})"
        )
    if len(rows) >= 2:
        one, many = rows[0], rows[-1]
        scale = float(one["wall"]) / float(many["wall"])
        print(
            f"{many['processes']} processes / 1: {scale:.2f}x the papers per second "
            f"(the encoder alone: {pair / before:.2f}x); {many['processes']} processes / the "
            f"encoder alone in 2 processes: {len(ids) / float(many['wall']) / pair:.2f}x"
        )
    last = rows[-1]
    per_process = len(ids) / float(last["wall"]) / int(last["processes"])
    per_cpu = len(ids) / float(last["cpu"])
    print(
        f"Projection, not measured: all of arXiv ({ARCHIVE:,} papers), each core an embed "
        f"process doing what each did here ({per_process:.1f} papers/s; at {per_cpu:.1f} per "
        "CPU-second on uncontended cores), the database and broker keeping up:"
    )
    for cores in CORES:
        hours = ARCHIVE / (cores * per_process) / 3600
        best = ARCHIVE / (cores * per_cpu) / 3600
        print(f"  {cores} cores: {hours:.1f} h ({best:.1f} h on uncontended cores)")
    print(f"logs in {out}")


if __name__ == "__main__":
    main()
