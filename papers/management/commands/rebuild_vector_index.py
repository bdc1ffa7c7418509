from __future__ import annotations

from django.core.management.base import BaseCommand
from tqdm import tqdm

from papers.search import PAPERS
from wovepaper.lib.search import backend_for


class Command(BaseCommand):
    help = (
        "Build the papers' vector index (usearch's file, pgvector's table) anew from the vectors "
        "in the database; searches keep reading the previous one until the new one replaces it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, no_progress: bool, **options):
        backend = backend_for(PAPERS, "semantic")
        bar = tqdm(
            unit=" vectors",
            disable=no_progress or options["verbosity"] == 0,
            file=self.stderr._out,
            desc="vector index",
        )
        count = backend.rebuild(progress=bar.update)
        bar.close()
        main_path = getattr(backend, "main_path", None)
        where = main_path() if main_path else getattr(backend, "table", None)
        self.stdout.write(
            f"indexed {count} vectors" + (f" in {where}" if where else " (nothing to build)")
        )
