from __future__ import annotations

import time
from datetime import date

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from papers.clients.arxiv import ArxivOAIClientError
from papers.harvesting import HarvestError, HarvestLocked, harvest_window
from papers.oai import METADATA_PREFIXES, OAIError


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise CommandError(f"{value!r} is not a date (YYYY-MM-DD)") from exc


class Command(BaseCommand):
    help = (
        "Harvest arXiv over OAI-PMH in the foreground. Without --from, continues the set's "
        "unfinished run or starts from the last successful one (a full harvest the first time)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--set",
            dest="set_spec",
            default="",
            help="OAI set, e.g. cs, math, physics:hep-th, cs:cs:LG (default: all)",
        )
        parser.add_argument("--from", dest="from_date", type=_day, help="first datestamp day")
        parser.add_argument("--until", dest="until_date", type=_day, help="last datestamp day")
        parser.add_argument(
            "--endpoint", help=f"OAI-PMH base URL (default {settings.ARXIV_OAI_URL})"
        )
        parser.add_argument(
            "--metadata-prefix", choices=METADATA_PREFIXES, default=settings.HARVEST_METADATA_PREFIX
        )
        parser.add_argument(
            "--resume",
            dest="resume_run_id",
            type=int,
            metavar="RUN_ID",
            help="resume this harvest run from its checkpoint",
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(
        self,
        *args,
        set_spec,
        from_date,
        until_date,
        endpoint,
        metadata_prefix,
        resume_run_id,
        no_progress,
        **options,
    ):
        bar = tqdm(
            unit=" records",
            disable=no_progress or options["verbosity"] == 0,
            file=self.stderr._out,
            desc=f"arXiv {set_spec or 'all'}",
        )
        runs = []

        def on_start(run):
            runs.append(run)
            bar.set_description(f"run {run.pk} {run.set_spec or 'all'}")

        def on_page(run, page):
            if page.token and page.token.complete_list_size and bar.total is None:
                bar.total = page.token.complete_list_size - (page.token.cursor or 0)
            bar.update(page.item_count)
            bar.set_postfix(
                page=run.pages, new=run.created, upd=run.updated, rej=run.rejected, refresh=False
            )

        started = time.monotonic()
        try:
            run = harvest_window(
                set_spec=set_spec,
                metadata_prefix=metadata_prefix,
                from_date=from_date,
                until_date=until_date,
                endpoint=endpoint,
                resume_run_id=resume_run_id,
                incremental=from_date is None and resume_run_id is None,
                on_start=on_start,
                on_page=on_page,
            )
        except HarvestLocked as exc:
            raise CommandError(str(exc)) from exc
        except (HarvestError, OAIError, ArxivOAIClientError) as exc:
            run = runs[0] if runs else None
            where = f" (run {run.pk}: resume with --resume {run.pk})" if run else ""
            raise CommandError(f"harvest failed{where}: {exc}") from exc
        finally:
            bar.close()
        elapsed = time.monotonic() - started
        self.stdout.write(
            f"harvest run {run.pk} {run.status}: set {run.set_spec or 'all'}, "
            f"{run.metadata_prefix}, {run.from_date or 'beginning'}..{run.until_date or 'today'}; "
            f"{run.pages} pages in {elapsed:.1f}s; created {run.created}, updated {run.updated}, "
            f"unchanged {run.unchanged}, rejected {run.rejected}, deleted {run.deleted}"
        )
        if run.response_date:
            self.stdout.write(f"next incremental run starts from {run.response_date.date()}")
