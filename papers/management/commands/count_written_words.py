from __future__ import annotations

from django.core.management.base import BaseCommand

from papers.spelling import count_written_words


class Command(BaseCommand):
    help = (
        "Count the words papers' titles, abstracts and bylines write, and in how many papers: "
        "the vocabulary a misspelt search is corrected against (Celery beat runs it daily)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--no-progress", action="store_true", help="Print only the total.")

    def handle(self, *args, no_progress: bool, **options):
        def progress(read: int) -> None:
            self.stdout.write(f"\r{read:,} papers read", ending="")
            self.stdout.flush()

        words = count_written_words(progress=None if no_progress else progress)
        if not no_progress:
            self.stdout.write("")
        self.stdout.write(f"{words:,} distinct words written, ready for spelling suggestions.")
