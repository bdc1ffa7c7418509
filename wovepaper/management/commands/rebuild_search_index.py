"""Build the configured search engine's index anew from the database, with progress."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from tqdm import tqdm

from wovepaper.lib.search import backend_for
from wovepaper.lib.search.engine_feed import collection_named, record_caught_up


class Command(BaseCommand):
    help = (
        "Rebuild the search engine's index (settings.SEARCH_ENGINE) from the database: "
        "after a first deploy, a change of fields, or to repair a lost update. Searches "
        "keep reading the previous index until the new one is complete."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "collections",
            nargs="*",
            help=f"what to rebuild: any of {', '.join(settings.SEARCH_COLLECTIONS)} (default: all)",
        )

    def handle(self, *args, collections, **options):
        unknown = set(collections) - set(settings.SEARCH_COLLECTIONS)
        if unknown:
            raise CommandError(f"no such collection: {', '.join(sorted(unknown))}")
        engine = settings.SEARCH_ENGINE
        if engine == "database":
            self.stdout.write(
                "SEARCH_ENGINE is 'database': the database keeps its own search "
                "index; nothing to rebuild."
            )
            return
        for name in collections or list(settings.SEARCH_COLLECTIONS):
            collection = collection_named(name)
            backend = backend_for(collection)
            started = timezone.now()
            with tqdm(
                total=collection.count(),
                desc=f"{engine} {name}",
                unit=" docs",
                disable=options["verbosity"] < 1,
            ) as bar:
                written = backend.rebuild(progress=bar.update)
            # The periodic catch-up goes on from here: changes during the rebuild included.
            record_caught_up(collection, started)
            self.stdout.write(f"{name}: {written:,} documents in the {engine} index")
