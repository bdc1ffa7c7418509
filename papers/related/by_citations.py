"""Related by citations: papers related to a paper by the citation graph, each with why: those
that cite the same works (shared references: archive papers, and works outside the archive by
the key the source named them with) and those cited together with it (co-cited).

Both read bounded slices of the graph whatever a paper's fame: at most RELATED_REFERENCES of the
paper's references (archive papers first) and RELATED_EDGES of the edges to them; at most
RELATED_CITING of its newest citing papers and their references. A count is over those slices,
and the page says so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db.models import F

from ..models import Citation, Paper
from .core import counted, live_papers

RELATED_REFERENCES = 100
RELATED_EDGES = 20000
RELATED_CITING = 200
RELATED_SHOWN = 5


@dataclass
class RelatedByCitation:
    paper: Paper
    shared_references: int = 0  # archive papers both cite
    co_cited: int = 0  # papers citing both
    shared_outside: int = 0  # works outside the archive both cite (under the same key)

    @property
    def reason(self) -> str:
        parts = []
        n, m = self.shared_references, self.shared_outside
        if n and m:
            parts.append(f"cites {n + m} of the same works ({n} of this archive)")
        elif n:
            parts.append(f"cites {n} of the same paper{'s' if n != 1 else ''} of this archive")
        elif m:
            parts.append(f"cites {m} of the same work{'s' if m != 1 else ''} outside this archive")
        if self.co_cited:
            parts.append(f"cited together with it by {counted(self.co_cited, 'paper')}")
        return "; ".join(parts).capitalize()


def related_by_citations(paper: Paper, *, cited_by: int) -> list[RelatedByCitation]:
    """Up to RELATED_SHOWN papers sharing the most references with `paper` or cited
    together with it most often (`cited_by`: its citing papers in the archive, known to the
    caller; 0 skips the co-citation queries). At most five queries."""
    shared: Counter[int] = Counter()
    outside: Counter[int] = Counter()
    # Its references, archive papers first: a work outside the archive is matched by its key
    # (the same work named by one id by both citing papers' sources).
    references = list(
        Citation.objects.filter(citing_paper=paper)
        .order_by(F("cited_paper").asc(nulls_last=True), "cited_key")
        .values_list("cited_key", "cited_paper_id")
        .distinct()[:RELATED_REFERENCES]
    )
    in_archive = sorted({pk for _, pk in references if pk is not None})
    elsewhere = sorted({key for key, pk in references if pk is None})
    if references:
        # One query in two arms, each served by its own partial index: the cited-by index
        # (resolved edges) and the outside-key index (unresolved ones). An OR of the two lets
        # the planner read every unresolved edge instead.
        columns = ("citing_paper_id", "cited_key", "cited_paper_id")
        others = Citation.objects.exclude(citing_paper=paper)
        edges = set(
            others.filter(cited_paper_id__in=in_archive)
            .values_list(*columns)
            .union(
                others.filter(cited_paper__isnull=True, cited_key__in=elsewhere).values_list(
                    *columns
                ),
                all=True,
            )[:RELATED_EDGES]
        )
        shared.update(citing for citing, _, pk in edges if pk is not None)
        outside.update(citing for citing, _, pk in edges if pk is None)
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
    scores = Counter(
        {pk: shared[pk] + outside[pk] + co_cited[pk] for pk in {*shared, *outside, *co_cited}}
    )
    # A single shared reference or co-citation says little: two or more, or nothing.
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))  # ties by id
    best = [pk for pk, score in ranked[: RELATED_SHOWN * 2] if score >= 2]
    if not best:
        return []
    papers = live_papers(best)
    return [
        RelatedByCitation(
            paper=papers[pk],
            shared_references=shared[pk],
            co_cited=co_cited[pk],
            shared_outside=outside[pk],
        )
        for pk in best
        if pk in papers
    ][:RELATED_SHOWN]
