"""`manage.py load_citations --openalex-works FILE [FILE ...] --as-of YYYY-MM-DD`: the references
and citations per year of the archive's papers from OpenAlex snapshot files
(papers.citations.files)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from papers.citations.files import openalex_works_file_load


class Command(BaseCommand):
    help = "Load citations from OpenAlex snapshot files (works, gzipped JSON lines)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--openalex-works", nargs="+", type=Path, required=True)
        parser.add_argument(
            "--as-of",
            required=True,
            help="the snapshot's date (YYYY-MM-DD): the pages say the references are as of it",
        )

    def handle(self, *args, **options) -> None:
        try:
            as_of = datetime.strptime(options["as_of"], "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError as error:
            raise CommandError(f"--as-of: {error}") from error
        for path in options["openalex_works"]:
            if not path.is_file():
                raise CommandError(f"no such file: {path}")
            result = openalex_works_file_load(path, as_of=as_of)
            self.stdout.write(
                f"{path.name}: {result.works:,} works, {result.archive_papers:,} of them papers "
                f"here, {result.edges:,} references written, {result.set_aside:,} lines set "
                "aside (see the admin's rejected records)"
            )
