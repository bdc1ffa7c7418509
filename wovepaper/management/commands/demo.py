from __future__ import annotations

import logging
import os
from io import StringIO
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from wovepaper.demo.citations import demo_citations_load
from wovepaper.demo.identities import demo_identities_load, demo_tour
from wovepaper.lib.embeddings import text_encoder
from wovepaper.site_record import site_record_sync

SAMPLE = Path(settings.BASE_DIR) / "papers" / "sample" / "arxiv-sample.jsonl.gz"


class Command(BaseCommand):
    help = (
        "Prepare the demo site (migrate, import the bundled arXiv sample, match the recorded "
        "researcher identities through production's matching) and serve it on 127.0.0.1:8000."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--no-serve",
            action="store_true",
            help="Only prepare the data (a rerun changes nothing); serve it later with "
            "'manage.py runserver'.",
        )
        parser.add_argument(
            "--addrport",
            default="127.0.0.1:8000",
            metavar="HOST:PORT",
            help="Where to serve the demo, as runserver takes it (default 127.0.0.1:8000; e.g. "
            "127.0.0.1:8146 for another port). Links, e-mails and the API reference use it.",
        )

    def handle(self, *args, no_serve: bool, addrport: str, **options):
        verbosity = options["verbosity"]
        base = f"http://{addrport}"
        if "SITE_URL" not in os.environ:
            # Canonical links, e-mails and the API reference's "Try it out" point at the
            # address the demo serves on, not the default port.
            _site_url_set(base)
        self.stdout.write("Migrating the database…")
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write(f"Importing the bundled arXiv sample ({SAMPLE.name})…")
        call_command(
            "import_arxiv_snapshot",
            str(SAMPLE),
            no_progress=verbosity < 2,
            stdout=self.stdout,
            stderr=self.stderr,
        )
        self.stdout.write(
            "Matching the papers of the recorded Semantic Scholar and OpenAlex "
            "answers (served from 127.0.0.1)…"
        )
        # The replay has no ROR records, on purpose, and its sources disagree about a few
        # people: the summary says both once, in words, so matching's own log lines (a warning
        # about each batch's ROR answer, the count of conflicts) are not printed here.
        quiet = [
            logging.getLogger(n) for n in ("researchers.matching.run", "researchers.matching.apply")
        ]
        levels = [logger.level for logger in quiet]
        for logger in quiet:
            logger.setLevel(logging.ERROR)
        try:
            summary = demo_identities_load()
        finally:
            for logger, level in zip(quiet, levels, strict=True):
                logger.setLevel(level)
        self.stdout.write(summary.describe())
        self.stdout.write(demo_citations_load().describe())
        for step in settings.DEMO_STEPS:
            if "say" in step:
                self.stdout.write(step["say"])
            said = StringIO()
            call_command(*step["command"], stdout=said, stderr=said, **step.get("options", {}))
            if "offline" in step and "unreachable" in said.getvalue():
                self.stdout.write(step["offline"])
            else:
                self.stdout.write(said.getvalue(), ending="")
        site_record_sync()
        self.stdout.write(self.style.SUCCESS("Demo data ready."))
        self.stdout.write("\n".join(demo_tour(base)))
        if no_serve:
            return
        # The first search by meaning would otherwise wait for the model's export (once per
        # machine); loaded here, in the process that serves, it also costs no first request.
        if not text_encoder().is_prepared():
            self.stdout.write("Preparing search by meaning (the encoder's model, once: ~15 s)…")
        call_command("prepare_encoder", stdout=StringIO())
        self.stdout.write(self.style.SUCCESS(f"Serving the demo on {base}/"))
        call_command("runserver", addrport, use_reloader=False)


def _site_url_set(base: str) -> None:
    """SITE_URL for this process, and what is made from it at start-up (the API schema's
    server), as if the environment had said it."""
    from drf_spectacular.settings import spectacular_settings

    settings.SITE_URL = base
    spectacular_settings.apply_patches({"SERVERS": [{"url": base}]})
