"""The share of references resolved to archive papers, on the database this runs against (the
demo's, after `manage.py demo --no-serve`: the recorded citations of
wovepaper/demo/recordings/citations.json over the demo's archive), per source, with every
resolved reference listed for checking by hand.

    DATABASE_URL=sqlite:////tmp/demo.sqlite3 python manage.py demo --no-serve
    DATABASE_URL=sqlite:////tmp/demo.sqlite3 python benchmarks/citation_resolution.py

Only references count (a paper's own reference list, as a source gave it): the edges from
Semantic Scholar's list of the works citing a paper resolve their citing end by construction.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

import django  # noqa: E402

django.setup()

from django.db.models import Count, Q  # noqa: E402

from papers.models import Citation, CitationCoverage  # noqa: E402


def main() -> int:
    asked = CitationCoverage.objects.filter(known=True).values_list("paper_id", "source")
    references = Citation.objects.filter(
        Q(*[Q(citing_paper_id=pk, source=source) for pk, source in asked], _connector=Q.OR)
        if asked
        else Q(pk__in=[])
    )
    rows = references.values("source").annotate(
        held=Count("id"), resolved=Count("id", filter=Q(cited_paper__isnull=False))
    )
    for row in rows.order_by("source"):
        share = row["resolved"] / row["held"] if row["held"] else 0
        print(
            f"{row['source']}: {row['resolved']} of {row['held']} references resolved to "
            f"archive papers ({share:.1%})"
        )
    print("Resolved references, for checking by hand:")
    resolved = references.exclude(cited_paper=None).select_related("citing_paper", "cited_paper")
    for edge in resolved.order_by("citing_paper__arxiv_id", "cited_paper__arxiv_id"):
        print(
            f"  {edge.citing_paper.arxiv_id} ({edge.citing_paper.title[:50]}) cites "
            f"{edge.cited_paper.arxiv_id} ({edge.cited_paper.title[:50]}) by "
            f"{edge.source} id {edge.cited_openalex_id or edge.cited_s2_id or edge.cited_doi}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
