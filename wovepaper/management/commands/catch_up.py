"""`manage.py catch_up`: what an operator runs after the broker was down (or tasks were lost).

A harvest that could not reach the broker built its pages' search documents itself but queued
no matching (papers.harvest.handoff). This builds every search document still missing or stale,
here, and queues one `researchers.match_next_batch` task per MATCH_BATCH_SIZE papers waiting for
matching, for the match workers to take.
"""

from __future__ import annotations

from math import ceil

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from papers.search.postgres_documents import search_index_pending
from researchers.matching import papers_waiting_count
from wovepaper.lib.queueing import broker_forget_failure, send_now

MATCH_NEXT_BATCH = "researchers.match_next_batch"


class Command(BaseCommand):
    help = (
        "Build every pending search document here and queue matching for every paper waiting "
        "for it (after the broker was down, or tasks were lost)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--no-matching", action="store_true", help="search documents only")

    def handle(self, *args, no_matching: bool, **options):
        built = search_index_pending()
        self.stdout.write(f"search documents built: {built}")
        if no_matching:
            return
        waiting = papers_waiting_count()
        if settings.CELERY_TASK_ALWAYS_EAGER:
            self.stdout.write(
                f"papers waiting for matching: {waiting}; there is no broker to queue them on: "
                "`manage.py match_researchers` matches them here"
            )
            return
        batches = ceil(waiting / settings.MATCH_BATCH_SIZE)
        broker_forget_failure()  # the operator says it is back: ask it
        for sent in range(batches):
            failure = send_now(MATCH_NEXT_BATCH, kwargs={"limit": settings.MATCH_BATCH_SIZE})
            if failure:
                raise CommandError(
                    f"the Celery broker is unreachable ({failure}) after "
                    f"{sent} of {batches} matching batches were queued; run this again once it "
                    "is back, or `manage.py match_researchers` to match here"
                )
        self.stdout.write(
            f"matching queued: {batches} batches of up to {settings.MATCH_BATCH_SIZE} papers "
            f"for the {waiting} papers waiting"
        )
