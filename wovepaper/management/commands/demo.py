from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

SAMPLE = Path(settings.BASE_DIR) / "papers" / "sample" / "arxiv-sample.jsonl.gz"


class Command(BaseCommand):
    help = (
        "Prepare the demo site (migrate, import the bundled arXiv sample, run what matching can) "
        "and serve it on 127.0.0.1:8000."
    )

    def add_arguments(self, parser):
        parser.add_argument("--no-serve", action="store_true", help="Only prepare the data.")
        parser.add_argument("--addrport", default="127.0.0.1:8000")

    def handle(self, *args, no_serve: bool, addrport: str, **options):
        verbosity = options["verbosity"]
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
        for step in settings.DEMO_STEPS:
            call_command(
                *step["command"], stdout=self.stdout, stderr=self.stderr, **step.get("options", {})
            )
        if no_serve:
            self.stdout.write(self.style.SUCCESS("Demo data ready."))
            return
        self.stdout.write(self.style.SUCCESS(f"Serving the demo on http://{addrport}/"))
        call_command("runserver", addrport, use_reloader=False)
