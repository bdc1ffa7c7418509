"""The stored page figures of researchers, recomputed for the researchers a batch touched.

Pages read only these stored fields, so a researcher with 2,000 papers renders with the same
queries as one with 2. Each chunk of researchers costs a fixed number of set-based queries
(whatever their paper counts): authorship rows with author counts, categories, co-authors,
co-author names, and the bulk update.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from django.db.models import Count, Exists, IntegerField, OuterRef, Subquery
from django.utils import timezone

from papers.models import Authorship, PaperCategory
from wovepaper.lib.pagecache import pages_changed
from wovepaper.lib.search.engine_feed import engine_index_enqueue

from .models import Researcher
from .name_search import RESEARCHERS

CHUNK = 500
# Co-authors stored per researcher: the page draws the first ones and lists them all.
TOP_COAUTHORS = 200
# The first ones also carry which of them wrote together (the graph's edges).
LINKED_COAUTHORS = 40
# Co-authors are counted on papers with at most this many authors: in a 3,000-author
# collaboration paper everyone is everyone's co-author, which says nothing.
COAUTHOR_MAX_AUTHORS = 50

STAT_FIELDS = [
    "paper_count",
    "position_counts",
    "position_basis",
    "field_counts",
    "most_cited_paper",
    "cited_papers_count",
    "citations_here",
    "coauthors",
    "stats_updated_at",
]


def _count_subquery(**filters) -> Subquery:
    return Subquery(
        Authorship.objects.filter(paper_id=OuterRef("paper_id"), **filters)
        .order_by()
        .values("paper_id")
        .annotate(c=Count("pk"))
        .values("c"),
        output_field=IntegerField(),
    )


def researchers_update_stats(researcher_ids: Iterable[int]) -> int:
    """Recompute and store the page figures of these researchers. Idempotent."""
    ids = sorted(set(researcher_ids))
    for start in range(0, len(ids), CHUNK):
        _update_chunk(ids[start : start + CHUNK])
    pages_changed("researcher", ids)
    # Paper counts order the name search, and merges remove records from it.
    engine_index_enqueue(RESEARCHERS, ids)
    return len(ids)


def _position(position: int, authors: int) -> str:
    if authors <= 1:
        return "sole"
    if position == 1:
        return "first"
    if position == authors:
        return "last"
    return "middle"


def _coauthor_links(linked: list[int], shared: list[set[int]]) -> dict[int, Counter]:
    """How many of the researcher's papers each pair of `linked` co-authors wrote together,
    kept on the one of the pair that comes first in `linked` (the more frequent co-author)."""
    rank = {other: n for n, other in enumerate(linked)}
    out: dict[int, Counter] = defaultdict(Counter)
    for members in shared:
        present = sorted((m for m in members if m in rank), key=rank.__getitem__)
        for i, a in enumerate(present):
            for b in present[i + 1 :]:
                out[a][b] += 1
    return out


# One pass over a chunk's authorships computes every stored figure: a pass per figure would
# read the rows again.
def _update_chunk(ids: list[int]) -> None:  # noqa: C901
    now = timezone.now()
    papers: dict[int, dict[int, tuple[int, int, int, int | None]]] = defaultdict(dict)
    rows = (
        Authorship.objects.filter(researcher_id__in=ids)
        .annotate(n_authors=_count_subquery(), n_unmatched=_count_subquery(researcher=None))
        .values_list(
            "researcher_id",
            "paper_id",
            "position",
            "n_authors",
            "n_unmatched",
            "paper__cited_by_count",
        )
    )
    for rid, paper_id, position, n_authors, n_unmatched, cited in rows:
        # One row per paper (a name twice in a byline counts once, at its first position).
        if paper_id not in papers[rid] or position < papers[rid][paper_id][0]:
            papers[rid][paper_id] = (position, n_authors or 0, n_unmatched or 0, cited)

    fields: dict[int, Counter] = defaultdict(Counter)
    for rid, code, n in (
        PaperCategory.objects.filter(paper__authorships__researcher_id__in=ids)
        .values_list("paper__authorships__researcher_id", "code")
        .annotate(n=Count("paper_id", distinct=True))
    ):
        fields[rid][code] = n

    large = Authorship.objects.filter(
        paper_id=OuterRef("paper_id"), position__gt=COAUTHOR_MAX_AUTHORS
    )
    # The matched authors of each of these researchers' papers (up to COAUTHOR_MAX_AUTHORS
    # names): who wrote with them, and which of their co-authors wrote together.
    authors_of: dict[int, set[int]] = defaultdict(set)
    for paper_id, other in (
        Authorship.objects.filter(
            paper_id__in=Authorship.objects.filter(researcher_id__in=ids).values("paper_id"),
            researcher__isnull=False,
            researcher__is_person=True,
        )
        .exclude(Exists(large))
        .values_list("paper_id", "researcher_id")
    ):
        authors_of[paper_id].add(other)
    top: dict[int, list[tuple[int, int]]] = {}
    links: dict[int, dict[int, Counter]] = {}
    for rid in ids:
        shared = [authors_of[p] for p in papers.get(rid, {}) if p in authors_of]
        counts = Counter(other for members in shared for other in members if other != rid)
        top[rid] = counts.most_common(TOP_COAUTHORS)
        links[rid] = _coauthor_links([other for other, _ in top[rid][:LINKED_COAUTHORS]], shared)
    wanted = {other for items in top.values() for other, _ in items}
    names = {
        pk: (name, slug)
        for pk, name, slug in Researcher.objects.filter(pk__in=wanted, is_person=True).values_list(
            "pk", "display_name", "slug"
        )
    }

    updates = []
    for rid in ids:
        mine = papers.get(rid, {})
        positions: Counter = Counter()
        basis = 0
        most_cited, most_cited_count, cited_papers, citations = None, -1, 0, 0
        for paper_id, (position, n_authors, n_unmatched, cited) in sorted(mine.items()):
            if n_unmatched == 0:
                basis += 1
                positions[_position(position, n_authors)] += 1
            if cited is not None:
                cited_papers += 1
                citations += cited
                if cited > most_cited_count:
                    most_cited, most_cited_count = paper_id, cited
        coauthors = []
        for other, n in top.get(rid, []):
            if other in names:
                name, slug = names[other]
                coauthors.append(
                    {
                        "id": other,
                        "name": name,
                        "slug": slug,
                        "count": n,
                        **(
                            {"links": sorted(links[rid][other].items())}
                            if links[rid].get(other)
                            else {}
                        ),
                    }
                )
        updates.append(
            Researcher(
                pk=rid,
                paper_count=len(mine),
                position_counts=dict(positions),
                position_basis=basis,
                field_counts=dict(fields.get(rid, {})),
                most_cited_paper_id=most_cited,
                cited_papers_count=cited_papers,
                citations_here=citations,
                coauthors=coauthors,
                stats_updated_at=now,
                modified_at=now,
            )
        )
    # modified_at too: the API's Last-Modified must move when the figures it serves do.
    Researcher.objects.bulk_update(updates, [*STAT_FIELDS, "modified_at"], batch_size=CHUNK)
