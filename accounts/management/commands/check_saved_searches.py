from __future__ import annotations

from django.core.management.base import BaseCommand

from accounts.library.alerts import saved_searches_check_due


class Command(BaseCommand):
    help = (
        "Check every saved search for new papers now, as the hourly beat task does (where no "
        "scheduler runs, as in the demo, this is how they are checked again). Safe to rerun: a "
        "paper is announced once per search."
    )

    def handle(self, *args, **options):
        new = saved_searches_check_due()
        self.stdout.write(
            f"saved searches checked: {new:,} new paper{'s' if new != 1 else ''} found"
        )
