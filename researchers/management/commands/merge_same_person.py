"""python manage.py merge_same_person [--proposals]"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from researchers.curation.same_person import same_person_merge, same_person_proposals


class Command(BaseCommand):
    help = (
        "Merge the records the sources' ids prove to be one person (reversible, each with its "
        "curation entry), list the pairs left to the curators, and with --proposals the name "
        "variants with co-authors in common. Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--proposals",
            action="store_true",
            help="also list name variants sharing co-author records (nothing is merged on them)",
        )

    def handle(self, *args, **options):
        outcome = same_person_merge()
        self.stdout.write(
            f"{len(outcome.merged)} merges made, {len(outcome.left)} pairs left to the curators."
        )
        for merged in outcome.merged:
            self.stdout.write(
                f"  merged {merged['folded']} into {merged['survivor']} "
                f"(curation entry {merged['entry']}): {merged['note']}"
            )
        for left in outcome.left:
            low, high = left["pair"]
            self.stdout.write(
                f"  left {low} / {high}: {'; '.join(left['why_not'])} "
                f"(evidence: {'; '.join(left['evidence'])})"
            )
        if options["proposals"]:
            proposals = same_person_proposals()
            self.stdout.write(f"{len(proposals)} name variants with co-authors in common:")
            for p in proposals:
                self.stdout.write(
                    f"  {p.low.display_name} ({p.low.pk}) / {p.high.display_name} "
                    f"({p.high.pk}), {p.names}; co-authors in common: {', '.join(p.coauthors)}; "
                    f"queue's evidence: {'; '.join(p.evidence.evidence_for()) or 'none'}"
                )
