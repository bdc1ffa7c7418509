from __future__ import annotations

import time
from datetime import date

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from papers.harvest.handoff import HandOff
from papers.harvest.lock import HarvestLocked, harvest_lock_break
from papers.harvest.oai import METADATA_PREFIXES
from papers.harvest.runs import harvest_failure_message, harvest_window
from papers.models import HarvestRun


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
        parser.add_argument(
            "--break-lock",
            action="store_true",
            help="first free the set's lock if the run holding it is dead (its heartbeat "
            "stopped; the admin lists it as stale); refused while a run of the set is alive",
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
        break_lock,
        no_progress,
        **options,
    ):
        if break_lock:
            self._break_lock(set_spec, resume_run_id)
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

        # Said once, on stderr, with the run's final counts (below), not also in the log.
        handoff = HandOff(announce=False)
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
                handoff=handoff,
            )
        except HarvestLocked as exc:
            raise CommandError(
                f"{exc}; if its run is dead (the admin lists it as stale), --break-lock frees "
                "the set at once, else its lock lapses within HARVEST_LOCK_TTL of its death"
            ) from exc
        except Exception as exc:  # whatever failed, the operator gets the run to resume
            raise CommandError(
                harvest_failure_message(runs[0].pk if runs else resume_run_id, exc)
            ) from exc
        finally:
            bar.close()
            if handoff.broker_down:
                self.stderr.write(handoff.notice())
        elapsed = time.monotonic() - started
        self.stdout.write(
            f"harvest run {run.pk} {run.status}: set {run.set_spec or 'all'}, "
            f"{run.metadata_prefix}, {run.from_date or 'beginning'}..{run.until_date or 'today'}; "
            f"{run.pages} pages in {elapsed:.1f}s; created {run.created}, updated {run.updated}, "
            f"unchanged {run.unchanged}, rejected {run.rejected}, deleted {run.deleted}"
        )
        if run.response_date:
            self.stdout.write(f"next incremental run starts from {run.response_date.date()}")

    def _break_lock(self, set_spec: str, resume_run_id: int | None) -> None:
        if resume_run_id is not None:
            run = HarvestRun.objects.filter(pk=resume_run_id).first()
            if run is None:
                raise CommandError(f"there is no harvest run {resume_run_id}")
            set_spec = run.set_spec
        try:
            self.stdout.write(harvest_lock_break(set_spec))
        except HarvestLocked as exc:
            raise CommandError(str(exc)) from exc
