"""Papers related to a paper by the citation graph, each with why: those that cite the same
archive papers (shared references) and those cited together with it (co-cited).

Both read bounded slices of the graph whatever a paper's fame: at most RELATED_REFERENCES of the
paper's archive references and RELATED_EDGES of the edges to them; at most RELATED_CITING of its
newest citing papers and their references. A count is over those slices, and the page says so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .models import Citation, Paper

RELATED_REFERENCES = 100
RELATED_EDGES = 20000
RELATED_CITING = 200
RELATED_SHOWN = 5


@dataclass
class RelatedByCitation:
    paper: Paper
    shared_references: int = 0  # archive papers both cite
    co_cited: int = 0  # papers citing both

    @property
    def reason(self) -> str:
        parts = []
        if self.shared_references:
            n = self.shared_references
            parts.append(f"cites {n} of the same paper{'s' if n != 1 else ''} of this archive")
        if self.co_cited:
            n = self.co_cited
            parts.append(f"cited together with it by {n} paper{'s' if n != 1 else ''}")
        return "; ".join(parts).capitalize()


def related_by_citations(paper: Paper, *, cited_by: int) -> list[RelatedByCitation]:
    """Up to RELATED_SHOWN papers sharing the most archive references with `paper` or cited
    together with it most often (`cited_by`: its citing papers in the archive, known to the
    caller; 0 skips the co-citation queries). At most five queries."""
    shared: Counter[int] = Counter()
    references = list(
        Citation.objects.filter(citing_paper=paper, cited_paper__isnull=False)
        .values_list("cited_paper_id", flat=True)
        .distinct()[:RELATED_REFERENCES]
    )
    if references:
        pairs = set(
            Citation.objects.filter(cited_paper_id__in=references)
            .exclude(citing_paper=paper)
            .values_list("citing_paper_id", "cited_paper_id")[:RELATED_EDGES]
        )
        shared.update(citing for citing, _ in pairs)
    co_cited: Counter[int] = Counter()
    if cited_by:
        citing = list(
            Citation.objects.filter(cited_paper=paper)
            .order_by("-citing_published")
            .values_list("citing_paper_id", flat=True)[:RELATED_CITING]
        )
        pairs = set(
            Citation.objects.filter(citing_paper_id__in=citing, cited_paper__isnull=False)
            .exclude(cited_paper=paper)
            .values_list("citing_paper_id", "cited_paper_id")
        )
        co_cited.update(cited for _, cited in pairs)
    scores = Counter({pk: shared[pk] + co_cited[pk] for pk in {*shared, *co_cited}})
    # A single shared reference or co-citation says little: two or more, or nothing.
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))  # ties by id
    best = [pk for pk, score in ranked[: RELATED_SHOWN * 2] if score >= 2]
    if not best:
        return []
    papers = Paper.objects.in_bulk(best)
    return [
        RelatedByCitation(paper=papers[pk], shared_references=shared[pk], co_cited=co_cited[pk])
        for pk in best
        if pk in papers and not papers[pk].is_deleted
    ][:RELATED_SHOWN]
