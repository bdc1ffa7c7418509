"""python manage.py clean_bylines [--undo ENTRY_ID]: researchers.byline_cleanup as a command."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from researchers.byline_cleanup import byline_cleanup_undo, bylines_clean


class Command(BaseCommand):
    help = (
        "Read every paper's authorships again by today's byline rules (papers.nonpersons): "
        "remove the entries that name no one, mark collaborations, mark not-a-person the "
        "researcher records that name no one; print each removal. Each change is a curators' "
        "history entry, which --undo puts back. Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--undo", type=int, metavar="ENTRY_ID", help="Put back what one entry changed."
        )

    def handle(self, *args, undo: int | None = None, **options):
        if undo is not None:
            try:
                entry = byline_cleanup_undo(entry_id=undo)
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(f"Entry {undo} undone (entry {entry.pk}).")
            return
        result = bylines_clean()
        for line in result.removed:
            self.stdout.write(f"removed  {line}")
        for line in result.marked:
            self.stdout.write(f"no person  researcher {line}")
        self.stdout.write(
            f"{result.papers_changed} papers changed: {result.authorships_removed} authorships "
            f"removed, {result.collaborations_marked} collaborations marked; "
            f"{result.researchers_marked} researcher records marked as naming no person."
        )
