"""Papers' sentence embeddings (papers.models.PaperEmbedding), computed after papers are written.

The encoder (wovepaper.lib.embeddings) costs tens of milliseconds a paper on a CPU, a hundred
times what writing the paper costs, so embedding is a stage of its own on Celery's `embed`
queue: harvest pages and import batches hand their paper ids to `embed_enqueue` once they
commit, and harvesting and matching never wait on it. Embedding workers scale out: any number
of processes on any number of machines take the tasks.

- `embed_papers(ids)`: embed those of these papers that are pending (a harvest page's task);
- `batch_claim(after=id)` then `batch_embed(batch)`: a sweep's batch, the next pending papers
  past that id (chained by papers.tasks.embed_pending; `embed_next_batch` does both);
- `embed_pending()`: every pending paper, batch after batch (the backfill command).

A paper is pending when it has no vector from the configured encoder for its current digest
(`source_hash`): a new paper, a changed title or abstract, or a change of model.

Every batch first claims its papers (PaperEmbeddingClaim, a token and a lease of
EMBED_CLAIM_SECONDS; wovepaper.lib.leases, as matching's batches do): two workers, or a
message delivered twice, never embed the same paper at once, and what a batch finds claimed it
leaves to the holder. The batch writes its vectors and drops its claims in one transaction, and
its papers go to the vector index's writer when that transaction commits: the index follows the
stored vectors batch by batch. A worker that dies leaves its claims until the lease lapses.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, QuerySet
from django.utils import timezone

from wovepaper.lib.batches import chunked
from wovepaper.lib.embeddings import (
    STORED_DTYPE,
    TextEncoder,
    from_stored,
    text_encoder,
    to_stored,
)
from wovepaper.lib.leases import rows_lease
from wovepaper.lib.queueing import send_after_commit
from wovepaper.lib.search.engine_feed import vector_index_enqueue
from wovepaper.lib.search.vectors import vectors_written

from ..models import Paper, PaperEmbedding, PaperEmbeddingClaim
from . import PAPERS

logger = logging.getLogger(__name__)

# Paper ids per task message: about ten seconds of one core's work with the default model.
TASK_CHUNK = 128


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


@dataclass(frozen=True)
class Batch:
    """Papers a batch holds (`ids`, under its claim's `token`), and the last id it looked at:
    where the next batch of a sweep starts."""

    token: str
    ids: frozenset[int]
    last: int


def embed_papers(
    paper_ids: Sequence[int], *, encoder: TextEncoder | None = None, feed_index: bool = True
) -> int:
    """Embed those of these papers that are pending and that no other batch holds; returns
    how many vectors were written. Idempotent: a paper already embedded from its current
    digest by this model is skipped, and so is one another batch holds (it embeds it)."""
    if not paper_ids:
        return 0
    encoder = encoder or text_encoder()
    candidates = list(
        papers_pending(encoder).filter(pk__in=list(paper_ids)).values_list("pk", flat=True)
    )
    if not candidates:
        return 0
    token, held = _claim(candidates)
    return batch_embed(
        Batch(token, frozenset(held), max(candidates)), encoder=encoder, feed_index=feed_index
    )


def batch_claim(
    *, after: int = 0, batch_size: int | None = None, encoder: TextEncoder | None = None
) -> Batch | None:
    """Claim the next `batch_size` (EMBED_BATCH_SIZE) pending papers with an id past `after`
    that no batch holds; None when there are none. Another batch may take some of them between
    our look and our claim: the batch then holds fewer, or none."""
    encoder = encoder or text_encoder()
    held = PaperEmbeddingClaim.objects.filter(
        paper_id=OuterRef("pk"), claimed_until__gt=timezone.now()
    )
    ids = list(
        papers_pending(encoder)
        .filter(pk__gt=after)
        .exclude(Exists(held))
        .order_by("pk")
        .values_list("pk", flat=True)[: batch_size or settings.EMBED_BATCH_SIZE]
    )
    if not ids:
        return None
    token, taken = _claim(ids)
    return Batch(token, frozenset(taken), ids[-1])


def batch_embed(
    batch: Batch, *, encoder: TextEncoder | None = None, feed_index: bool = True
) -> int:
    """Embed the papers `batch` holds that are still pending; returns how many vectors were
    written. The vectors are written and the claims dropped in one transaction; the papers go
    to the vector index's writer when it commits, unless `feed_index` is off (a caller that
    rebuilds the index instead). Failing, it drops its claims, so the next batch need not wait
    for the lease."""
    if not batch.ids:
        return 0
    encoder = encoder or text_encoder()
    try:
        # Looked at again once held: a batch that finished one of them between our first look
        # and our claim dropped its claim in the transaction that stored the vector.
        rows = list(
            papers_pending(encoder)
            .filter(pk__in=batch.ids)
            .order_by("pk")
            .values_list("pk", "title", "abstract", "source_hash")
        )
        vectors = encoder.encode([paper_text(title, abstract) for _, title, abstract, _ in rows])
        embeddings = [
            _embedding(pk, source_hash, encoder, blob)
            for (pk, _, _, source_hash), blob in zip(rows, to_stored(vectors), strict=True)
        ]
        with transaction.atomic():
            _upsert(embeddings)
            _release(batch.token)
            if feed_index:
                vector_index_enqueue(PAPERS, [e.paper_id for e in embeddings])
    except BaseException:
        # If the database still answers (else the lease lapses).
        with contextlib.suppress(Exception):
            _release(batch.token)
        raise
    return len(embeddings)


def _claim(paper_ids: list[int]) -> tuple[str, set[int]]:
    now = timezone.now()

    def first_claim(pk: int, claim: dict[str, Any]) -> PaperEmbeddingClaim:
        return PaperEmbeddingClaim(paper_id=pk, **claim)

    return rows_lease(
        PaperEmbeddingClaim,
        paper_ids,
        key="paper_id",
        now=now,
        until=now + timedelta(seconds=settings.EMBED_CLAIM_SECONDS),
        new_row=first_claim,
    )


def _release(token: str) -> None:
    if token:
        PaperEmbeddingClaim.objects.filter(claim=token).delete()


def _embedding(pk: int, source_hash: str, encoder: TextEncoder, blob: bytes) -> PaperEmbedding:
    return PaperEmbedding(
        paper_id=pk,
        model=encoder.name,
        source_hash=source_hash,
        dimensions=encoder.dimensions,
        vector=blob,
    )


def _upsert(embeddings: list[PaperEmbedding]) -> None:
    if not embeddings:
        return
    PaperEmbedding.objects.bulk_create(
        embeddings,
        update_conflicts=True,
        unique_fields=["paper"],
        update_fields=["model", "source_hash", "dimensions", "vector", "embedded_at"],
    )
    for model in {e.model for e in embeddings}:
        vectors_written(PAPERS.name, model)


def embed_next_batch(
    *,
    after: int = 0,
    batch_size: int | None = None,
    encoder: TextEncoder | None = None,
    feed_index: bool = True,
) -> tuple[int, int | None]:
    """`batch_claim`, then `batch_embed`: returns how many vectors were written and the last id
    looked at (where the next batch starts), or None when no pending paper is left past `after`.
    Idempotent: what is done or held is not looked at again."""
    encoder = encoder or text_encoder()
    batch = batch_claim(after=after, batch_size=batch_size, encoder=encoder)
    if batch is None:
        return 0, None
    return batch_embed(batch, encoder=encoder, feed_index=feed_index), batch.last


def embed_pending(
    *,
    batch_size: int | None = None,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    encoder: TextEncoder | None = None,
    feed_index: bool = True,
) -> int:
    """Embed every pending paper, in id order, batch after batch (`embed_next_batch`);
    returns how many. `limit` stops after about that many.

    Interrupted, it loses at most the batch in hand (its claims lapse after
    EMBED_CLAIM_SECONDS): a rerun finds the rest still pending. Workers may embed at the same
    time; each paper is embedded by one of them. Each batch's papers go to the vector index as
    it commits, unless `feed_index` is off (a caller that rebuilds the index afterwards).
    """
    encoder = encoder or text_encoder()
    size = batch_size or settings.EMBED_BATCH_SIZE
    done = 0
    after: int | None = 0
    while limit is None or done < limit:
        step = size if limit is None else min(size, limit - done)
        written, after = embed_next_batch(
            after=after or 0, batch_size=step, encoder=encoder, feed_index=feed_index
        )
        if after is None:
            break
        done += written
        if progress:
            progress(written)
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
    for chunk in chunked(list(wanted), 2000):
        rows = (
            papers_pending(encoder)
            .filter(arxiv_id__in=chunk)
            .values_list("pk", "arxiv_id", "source_hash")
        )
        embeddings = [
            _embedding(pk, source_hash, encoder, to_stored(vectors[position[arxiv_id]][None])[0])
            for pk, arxiv_id, source_hash in rows
            if wanted[arxiv_id] == source_hash
        ]
        _upsert(embeddings)
        vector_index_enqueue(PAPERS, [e.paper_id for e in embeddings])
        taken += len(embeddings)
    return taken
