"""python manage.py match_researchers [--limit N] [--since DATE]"""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from researchers.curation.same_person import same_person_merge
from researchers.matching import match_run
from researchers.selectors import papers_waiting_count
from wovepaper.lib.http import service_probe

SERVICES = [("Semantic Scholar", "SEMANTIC_SCHOLAR_API_URL"), ("OpenAlex", "OPENALEX_API_URL")]


class Command(BaseCommand):
    help = (
        "Match papers' authors to Semantic Scholar and OpenAlex identities, newest papers "
        "first, in batches; shows progress and ends with a summary."
    )

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, help="match at most N papers")
        parser.add_argument("--since", help="only papers published on or after DATE (YYYY-MM-DD)")
        parser.add_argument("--batch-size", type=int, default=None)
        parser.add_argument(
            "--probe-timeout",
            type=float,
            default=5.0,
            help="seconds to wait for each service to answer a first probe; 0 skips the probe",
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, limit, since, batch_size, probe_timeout, no_progress, **options):
        since_dt = _since(since)
        if limit is not None and limit <= 0:
            raise CommandError("--limit must be a positive number")

        todo = papers_waiting_count(since=since_dt)
        if limit is not None:
            todo = min(todo, limit)
        if not todo:
            self.stdout.write("No papers wait for matching.")
            return

        if probe_timeout > 0:
            problems = _unreachable_services(probe_timeout)
            if problems:
                for problem in problems:
                    self.stdout.write(self.style.WARNING(problem))
                self.stdout.write(
                    self.style.WARNING(
                        f"Matching skipped: nothing was changed; {todo} papers wait for matching "
                        f"and will be matched on a later run."
                    )
                )
                return

        bar = tqdm(total=todo, unit="paper", disable=no_progress, file=self.stderr._out)

        def progress(result):
            bar.update(result.papers)
            bar.set_postfix(matched=result.matched, unknown=result.unknown, failed=result.failed)

        run, total = match_run(
            trigger="command", limit=todo, since=since_dt, batch_size=batch_size, progress=progress
        )
        bar.close()
        self.stdout.write(
            f"Matched {total.matched} papers, {total.unknown} unknown to both sources, "
            f"{total.failed} failed; {total.authorships_attached} authorships attached, "
            f"{total.researchers_created} researchers created, {total.conflicts} identity "
            f"conflicts recorded (run {run.pk})."
        )
        for error in total.errors:
            self.stdout.write(self.style.WARNING(error))
        if total.conflicts and settings.MATCH_MERGE_SAME_PERSON:
            outcome = same_person_merge()
            self.stdout.write(
                f"One person, one record: {len(outcome.merged)} merges made, "
                f"{len(outcome.left)} pairs left to the curators "
                "(python manage.py merge_same_person lists them)."
            )
        if total.failed:
            self.stdout.write(
                self.style.WARNING(
                    f"{total.failed} papers were left as they were and will be tried again."
                )
            )


def _since(since: str | None) -> datetime | None:
    if not since:
        return None
    try:
        return datetime.strptime(since, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError as exc:
        raise CommandError(f"--since takes a date as YYYY-MM-DD, not {since!r}") from exc


def _unreachable_services(timeout: float) -> list[str]:
    """What a first probe of each service found wrong (empty when all answered)."""
    problems = []
    for label, setting in SERVICES:
        url = getattr(settings, setting)
        reason = service_probe(url, timeout=timeout)
        if reason:
            problems.append(f"{label} ({url}) is unreachable: {reason}")
    return problems
