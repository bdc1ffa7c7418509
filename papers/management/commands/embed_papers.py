from __future__ import annotations

from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from papers.search.embedding_stage import (
    embed_pending,
    embeddings_load,
    embeddings_save,
    papers_pending,
)
from wovepaper.lib.embeddings import text_encoder

# Past this many papers a rebuild of the vector index costs less than feeding it by batches.
BULK = 5_000


def done_in_bulk(pending: int) -> bool:
    return pending > BULK


class Command(BaseCommand):
    help = (
        "Embed every paper that has no vector from the configured model for its current text "
        "(a backfill, with progress). Safe to interrupt and rerun: it resumes with what is "
        "still pending."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--batch-size", type=int, default=None, help="Papers a batch (EMBED_BATCH_SIZE)."
        )
        parser.add_argument("--limit", type=int, default=None, help="Stop after about this many.")
        parser.add_argument(
            "--load", type=Path, help="First take the vectors of this file (from --save)."
        )
        parser.add_argument(
            "--save", type=Path, help="Afterwards write every current vector to this file."
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, batch_size, limit, load, save, no_progress, **options):
        encoder = text_encoder()
        if load:
            if not load.exists():
                raise CommandError(f"{load}: no such file")
            self.stdout.write(
                f"took {embeddings_load(load, encoder=encoder):,} vectors from {load}"
            )
        pending = papers_pending(encoder).count()
        total = min(pending, limit) if limit is not None else pending
        if not pending:
            self.stdout.write(f"every paper has its vector from {encoder.name}; none to embed")
        else:
            self.stdout.write(f"{pending:,} papers pending for {encoder.name}")
        bar = tqdm(
            total=total,
            unit=" papers",
            disable=no_progress or options["verbosity"] == 0,
            file=self.stderr._out,
            desc="embedding",
        )
        # A large backfill feeds the vector index once, by rebuilding it, not batch by batch.
        done = embed_pending(
            batch_size=batch_size,
            limit=limit,
            progress=bar.update,
            encoder=encoder,
            feed_index=not done_in_bulk(pending),
        )
        bar.close()
        if pending:
            self.stdout.write(f"embedded {done:,} papers; {pending - done:,} still pending")
        if done and done_in_bulk(pending):
            call_command("rebuild_vector_index", no_progress=no_progress, stdout=self.stdout)
        if save:
            self.stdout.write(f"saved {embeddings_save(save, encoder=encoder)} vectors to {save}")
