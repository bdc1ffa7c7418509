"""Papers' sentence embeddings (papers.models.PaperEmbedding), computed after papers are written.

The encoder (wovepaper.lib.embeddings) costs tens of milliseconds a paper on a CPU, a hundred
times what writing the paper costs, so embedding is a stage of its own on Celery's `embed`
queue: harvest pages and import batches hand their paper ids to `embed_enqueue` once they
commit, and harvesting and matching never wait on it. Embedding workers scale out: each task
is independent, any number of processes on any number of machines can take them.

- `embed_papers(ids)`: embed those of these papers that are pending (what the tasks run);
- `embed_pending()`: walk every pending paper by id, in batches (the backfill command and the
  periodic sweep): resumable, since what is done is no longer pending.

A paper is pending when it has no vector from the configured encoder for its current digest
(`source_hash`): a new paper, a changed title or abstract, or a change of model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from itertools import islice
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db.models import Exists, F, OuterRef, QuerySet

from wovepaper.lib.embeddings import (
    STORED_DTYPE,
    TextEncoder,
    from_stored,
    text_encoder,
    to_stored,
)
from wovepaper.lib.queueing import send_after_commit
from wovepaper.lib.search.engine_feed import vector_index_enqueue
from wovepaper.lib.search.vectors import vectors_written

from ..models import Paper, PaperEmbedding
from . import PAPERS

logger = logging.getLogger(__name__)

# Paper ids per task message: about ten seconds of one core's work with the default model.
TASK_CHUNK = 128
# Papers read, encoded and written per step of a backfill.
PENDING_BATCH = 256


def paper_text(title: str, abstract: str) -> str:
    """What the model reads of a paper: its title, then its abstract (the model cuts the text
    at 256 word pieces, past which an abstract's last sentences add little)."""
    title = " ".join((title or "").split())
    abstract = " ".join((abstract or "").split())
    return f"{title}. {abstract}" if abstract else title


def papers_pending(encoder: TextEncoder | None = None) -> QuerySet[Paper]:
    """Papers (not deleted) with no vector from `encoder` for their current digest."""
    encoder = encoder or text_encoder()
    current = PaperEmbedding.objects.filter(
        paper_id=OuterRef("pk"), model=encoder.name, source_hash=OuterRef("source_hash")
    )
    return Paper.objects.filter(is_deleted=False).exclude(Exists(current))


def embed_papers(
    paper_ids: Sequence[int], *, encoder: TextEncoder | None = None, feed_index: bool = True
) -> int:
    """Embed those of these papers that are pending; returns how many vectors were written.
    Idempotent: a paper already embedded from its current digest by this model is skipped.
    The new vectors go to the vector index's writer after commit, unless `feed_index` is
    off (a caller that feeds many batches at once)."""
    if not paper_ids:
        return 0
    encoder = encoder or text_encoder()
    rows = list(
        papers_pending(encoder)
        .filter(pk__in=list(paper_ids))
        .order_by("pk")
        .values_list("pk", "title", "abstract", "source_hash")
    )
    if not rows:
        return 0
    vectors = encoder.encode([paper_text(title, abstract) for _, title, abstract, _ in rows])
    embeddings = [
        PaperEmbedding(
            paper_id=pk,
            model=encoder.name,
            source_hash=source_hash,
            dimensions=encoder.dimensions,
            vector=blob,
        )
        for (pk, _, _, source_hash), blob in zip(rows, to_stored(vectors), strict=True)
    ]
    _upsert(embeddings)
    if feed_index:
        vector_index_enqueue(PAPERS, [pk for pk, *_ in rows])
    return len(rows)


def _upsert(embeddings: list[PaperEmbedding]) -> None:
    PaperEmbedding.objects.bulk_create(
        embeddings,
        update_conflicts=True,
        unique_fields=["paper"],
        update_fields=["model", "source_hash", "dimensions", "vector", "embedded_at"],
    )
    for model in {e.model for e in embeddings}:
        vectors_written(PAPERS.name, model)


def embed_pending(
    *,
    batch_size: int = PENDING_BATCH,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    encoder: TextEncoder | None = None,
    feed_index: bool = True,
) -> int:
    """Embed every pending paper, in id order, `batch_size` at a time; returns how many.

    Interrupted, it loses at most the batch in hand: a rerun finds the rest still pending.
    `limit` stops after about that many (the periodic sweep's bound per run). The vector
    index is fed once at the end (each of its writes saves the whole index file), or not at
    all without `feed_index`, for a caller that rebuilds it.
    """
    encoder = encoder or text_encoder()
    embedded: list[int] = []
    done = 0
    last = 0
    while limit is None or done < limit:
        ids = list(
            papers_pending(encoder)
            .filter(pk__gt=last)
            .order_by("pk")
            .values_list("pk", flat=True)[:batch_size]
        )
        if not ids:
            break
        written = embed_papers(ids, encoder=encoder, feed_index=False)
        embedded += ids  # every one was pending a moment ago
        done += written
        last = ids[-1]
        if progress:
            progress(written)
    if feed_index:
        vector_index_enqueue(PAPERS, embedded)
    return done


def embed_enqueue(paper_ids: Sequence[int]) -> None:
    """Send these papers to the embed queue once the current transaction commits (at once
    outside one). Never fails the caller's write: the periodic sweep embeds what a lost
    message or a failed task leaves pending."""
    if not settings.EMBED_AFTER_WRITES:
        return
    send_after_commit("papers.embed_papers", paper_ids, chunk=TASK_CHUNK)


def embeddings_save(path: Path, *, encoder: TextEncoder | None = None) -> int:
    """Write every current vector of the configured model to `path` (numpy's .npz, no pickles),
    keyed by arXiv id and digest; returns how many. The demo ships its sample's vectors so
    that it starts in seconds (papers/sample/PROVENANCE.md)."""
    encoder = encoder or text_encoder()
    rows = list(
        PaperEmbedding.objects.filter(model=encoder.name, paper__is_deleted=False)
        .filter(source_hash=F("paper__source_hash"))
        .order_by("paper__arxiv_id")
        .values_list("paper__arxiv_id", "source_hash", "vector")
    )
    np.savez_compressed(
        path,
        model=np.array(encoder.name),
        arxiv_ids=np.array([r[0] for r in rows], dtype=str),
        source_hashes=np.array([r[1] for r in rows], dtype=str),
        vectors=from_stored([r[2] for r in rows], encoder.dimensions).astype(STORED_DTYPE),
    )
    return len(rows)


def embeddings_load(path: Path, *, encoder: TextEncoder | None = None) -> int:
    """Take the vectors of a file `embeddings_save` wrote, for the papers whose arXiv id and
    digest still match and that are pending; a file from another model is ignored. Returns
    how many were taken (the rest stay pending for `embed_pending`)."""
    encoder = encoder or text_encoder()
    with np.load(path, allow_pickle=False) as saved:
        if str(saved["model"]) != encoder.name:
            logger.warning("%s holds vectors of %s, not %s", path, saved["model"], encoder.name)
            return 0
        wanted = dict(
            zip(saved["arxiv_ids"].tolist(), saved["source_hashes"].tolist(), strict=True)
        )
        position = {arxiv_id: i for i, arxiv_id in enumerate(saved["arxiv_ids"].tolist())}
        vectors = saved["vectors"]
    taken = 0
    for chunk in _chunks(list(wanted), 2000):
        rows = (
            papers_pending(encoder)
            .filter(arxiv_id__in=chunk)
            .values_list("pk", "arxiv_id", "source_hash")
        )
        embeddings = [
            PaperEmbedding(
                paper_id=pk,
                model=encoder.name,
                source_hash=source_hash,
                dimensions=encoder.dimensions,
                vector=vectors[position[arxiv_id]].astype(STORED_DTYPE).tobytes(),
            )
            for pk, arxiv_id, source_hash in rows
            if wanted[arxiv_id] == source_hash
        ]
        _upsert(embeddings)
        vector_index_enqueue(PAPERS, [e.paper_id for e in embeddings])
        taken += len(embeddings)
    return taken


def _chunks(values: list, size: int):
    iterator = iter(values)
    while chunk := list(islice(iterator, size)):
        yield chunk
