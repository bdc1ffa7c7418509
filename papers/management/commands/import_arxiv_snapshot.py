from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from papers.ingest.importing import snapshot_import


class Command(BaseCommand):
    help = "Import the arXiv metadata snapshot (JSON lines, plain or gzipped). Safe to rerun."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--batch-size", type=int, default=2000)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, path: Path, batch_size: int, no_progress: bool, **options):
        if not path.exists():
            raise CommandError(f"{path}: no such file")
        bar = tqdm(
            unit=" records",
            disable=no_progress or options["verbosity"] == 0,
            file=self.stderr._out,
            desc=path.name,
        )

        def rejected(line_number: int, reason: str) -> None:
            self.stderr.write(f"line {line_number}: rejected: {reason}")

        counts, _ = snapshot_import(
            path, batch_size=batch_size, progress=bar.update, on_rejected=rejected
        )
        bar.close()
        self.stdout.write(
            f"{path.name}: created {counts.created}, updated {counts.updated}, "
            f"unchanged {counts.unchanged}, rejected {counts.rejected}"
        )
