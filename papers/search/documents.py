"""The papers' engine documents, built from the database (the source of truth)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from wovepaper.lib.search.orm import id_batches

from ..ingest.records import PaperRecord
from ..models import Paper


def paper_documents(paper_ids: Sequence[int]) -> Iterator[dict[str, Any]]:
    """The document of each paper that should be found: deleted papers have none."""
    rows = Paper.objects.filter(pk__in=list(paper_ids), is_deleted=False).values_list(
        "id", "title", "abstract", "authors", "categories", "published", "cited_by_count"
    )
    for paper_id, title, abstract, authors, categories, published, cited in rows.iterator(
        chunk_size=2000
    ):
        yield {
            "id": paper_id,
            "title": title,
            "abstract": abstract,
            "authors": authors,
            "categories": categories.split(),
            "published": published,
            "cited": cited,
        }


def paper_document_of_record(paper_id: int, record: PaperRecord) -> dict[str, Any] | None:
    """The document `paper_documents` gives for a paper just created from `record` (no
    citation count yet): a bulk import's new papers go to the engine without being read back.
    tests/search/test_bulk_load.py compares the two over the bundled sample."""
    if record.is_deleted:
        return None
    return {
        "id": paper_id,
        "title": record.title,
        "abstract": record.abstract,
        # As the upsert writes the byline (papers.ingest.upsert).
        "authors": record.authors_raw or ", ".join(a.display for a in record.authors),
        "categories": record.categories,
        "published": record.published,
        "cited": None,
    }


def paper_id_batches(size: int, *, after: int = 0) -> Iterator[list[int]]:
    return id_batches(Paper.objects.all(), size, after=after)
