"""python manage.py fetch_citations [--arxiv-id ID ...] [--limit N] [--batch-size N]"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from papers.citations.fetch import CitationFetchResult, citation_papers_due, citations_fetch
from papers.models import Paper


class Command(BaseCommand):
    help = (
        "Fetch papers' references and citing papers from Semantic Scholar and OpenAlex: the "
        "papers named, or the next papers due (never asked, newest first, then the stalest)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--arxiv-id", action="append", default=[], dest="arxiv_ids")
        parser.add_argument("--limit", type=int, default=100, help="papers due to fetch")
        parser.add_argument("--batch-size", type=int, default=100)

    def handle(self, *args, arxiv_ids, limit, batch_size, **options):
        if limit <= 0 or batch_size <= 0:
            raise CommandError("--limit and --batch-size must be positive numbers")
        if arxiv_ids:
            ids = list(Paper.objects.filter(arxiv_id__in=arxiv_ids).values_list("pk", flat=True))
            if len(ids) < len(set(arxiv_ids)):
                self.stdout.write(self.style.WARNING("Some arXiv ids are not in the archive."))
        else:
            ids = citation_papers_due(limit=limit)
        total = CitationFetchResult()
        for start in range(0, len(ids), batch_size):
            result = citations_fetch(ids[start : start + batch_size])
            total.papers += result.papers
            total.edges += result.edges
            total.citing_edges += result.citing_edges
            total.errors.extend(result.errors)
            total.detailed += result.detailed
            total.set_aside += result.set_aside
            total.detail_errors.extend(result.detail_errors)
            for source, n in result.unknown.items():
                total.unknown[source] = total.unknown.get(source, 0) + n
        self.stdout.write(
            f"Fetched citations of {total.papers} papers: {total.edges} references, "
            f"{total.citing_edges} edges from citing papers in the archive; unknown to "
            f"Semantic Scholar {total.unknown.get('s2', 0)}, "
            f"to OpenAlex {total.unknown.get('openalex', 0)}. References with influence and "
            f"contexts (S2's references endpoint): {total.detailed} papers, "
            f"{total.set_aside} malformed items set aside."
        )
        for error in total.detail_errors:
            self.stdout.write(
                self.style.WARNING(f"{error} (that paper keeps the paper batch's references)")
            )
        for error in total.errors:
            self.stdout.write(self.style.WARNING(f"{error} (nothing of that source changed)"))
