"""The papers' engine documents, built from the database (the source of truth)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from wovepaper.lib.search.orm import id_batches

from ..models import Paper


def paper_documents(paper_ids: Sequence[int]) -> Iterator[dict[str, Any]]:
    """The document of each paper that should be found: deleted papers have none."""
    rows = Paper.objects.filter(pk__in=list(paper_ids), is_deleted=False).values_list(
        "id", "title", "abstract", "categories", "published", "cited_by_count"
    )
    for paper_id, title, abstract, categories, published, cited in rows.iterator(chunk_size=2000):
        yield {
            "id": paper_id,
            "title": title,
            "abstract": abstract,
            "categories": categories.split(),
            "published": published,
            "cited": cited,
        }


def paper_id_batches(size: int) -> Iterator[list[int]]:
    return id_batches(Paper.objects.all(), size)
