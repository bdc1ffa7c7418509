"""The papers' vectors for search by meaning, from papers.models.PaperEmbedding (the source of
truth; the vector index is built from here)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from django.db.models import Count, F, Max

from wovepaper.lib.embeddings import from_stored
from wovepaper.lib.search.vectors import VectorSource

from ..models import PaperEmbedding


def _current(model: str):
    """Vectors from `model` of the papers' current text, of papers not deleted."""
    return PaperEmbedding.objects.filter(
        model=model, paper__is_deleted=False, source_hash=F("paper__source_hash")
    )


def _rows(queryset, limit: int | None = None) -> tuple[list[int], np.ndarray]:
    rows = list(queryset.values_list("paper_id", "dimensions", "vector")[:limit])
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    return [r[0] for r in rows], from_stored([r[2] for r in rows], rows[0][1])


def paper_vectors(paper_ids: Sequence[int], model: str) -> tuple[list[int], np.ndarray]:
    return _rows(_current(model).filter(paper_id__in=list(paper_ids)).order_by("paper_id"))


def author_paper_vectors(
    researcher_id: int, model: str, *, newest: int
) -> tuple[list[int], np.ndarray]:
    """A researcher's `newest` latest papers that have a current vector, newest first (papers
    related to a researcher's work: papers.related.like_papers). One query."""
    by_date = _current(model).filter(paper__authorships__researcher=researcher_id)
    return _rows(by_date.order_by("-paper__published"), newest)


def paper_vector_batches(size: int, model: str) -> Iterator[tuple[list[int], np.ndarray]]:
    """Every current vector, by paper id, in batches of at most `size`. Each batch is the id
    range of the model's next `size` stored vectors (read from the primary key alone), then
    the current ones in that range: asked as "the next `size` current ones", PostgreSQL could
    not tell how many rows the join keeps and read and sorted every vector after the last id
    for each batch (3.8 s a batch of 10,000 at 1M papers, a rebuild's reads growing with the
    square of the count)."""
    last = 0
    while True:
        upper = (
            PaperEmbedding.objects.filter(model=model, paper_id__gt=last)
            .order_by("paper_id")
            .values_list("paper_id", flat=True)[size - 1 : size]
            .first()
        )
        in_range = _current(model).filter(paper_id__gt=last)
        if upper is not None:
            in_range = in_range.filter(paper_id__lte=upper)
        ids, rows = _rows(in_range.order_by("paper_id"))
        if ids:
            yield ids, rows
        if upper is None:
            return
        last = upper


def paper_vector_ids(
    size: int, model: str, *, after: int = 0, newest: int = 0
) -> Iterator[tuple[list[int], list[int], int]]:
    """The model's stored vectors by paper id, in ranges of at most `size` rows past `after`
    (or, with `newest`, from the range holding the `newest` highest ids): for each range, the
    ids of every row (an index may hold any of them) and of the current ones among them (the
    index should hold exactly those), and the range's last id. Ids only, read from the
    primary key's order range by range, as `paper_vector_batches` does: no vector is read and
    no range holds more than `size` rows."""
    if newest:
        start = (
            PaperEmbedding.objects.filter(model=model)
            .order_by("-paper_id")
            .values_list("paper_id", flat=True)[newest : newest + 1]
            .first()
        )
        after = max(after, start or 0)
    last = after
    while True:
        stored = list(
            PaperEmbedding.objects.filter(model=model, paper_id__gt=last)
            .order_by("paper_id")
            .values_list("paper_id", flat=True)[:size]
        )
        if not stored:
            return
        current = list(
            _current(model)
            .filter(paper_id__gt=last, paper_id__lte=stored[-1])
            .order_by("paper_id")
            .values_list("paper_id", flat=True)
        )
        yield stored, current, stored[-1]
        if len(stored) < size:
            return
        last = stored[-1]


def papers_have_vectors(model: str) -> bool:
    """Whether any paper has a current vector from `model` (one query)."""
    return _current(model).exists()


def paper_vectors_version(model: str) -> str:
    latest = PaperEmbedding.objects.filter(model=model).aggregate(
        count=Count("pk"), latest=Max("embedded_at")
    )
    return f"{latest['count']}-{latest['latest'].timestamp() if latest['latest'] else 0}"


PAPER_VECTORS = VectorSource(
    vectors=paper_vectors,
    batches=paper_vector_batches,
    version=paper_vectors_version,
    present=papers_have_vectors,
    ids=paper_vector_ids,
)
