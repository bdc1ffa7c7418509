"""Papers' sentence embeddings: the real bundled model (no download), stored with its name,
re-embedded when the text or the model changes, fed after commit, backfilled resumably."""

from __future__ import annotations

import io
from datetime import timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from papers import tasks
from papers.models import PaperEmbedding, PaperEmbeddingClaim
from papers.search.embedding_stage import (
    embed_enqueue,
    embed_next_batch,
    embed_papers,
    embed_pending,
    embeddings_load,
    embeddings_save,
    paper_text,
    papers_pending,
)
from wovepaper.lib.embeddings import (
    MiniLMEncoder,
    MiniLMOnnxInt8Encoder,
    from_stored,
    text_encoder,
)


class RenamedMiniLM(MiniLMEncoder):
    """The same weights under another name: what a change of model looks like to the store."""

    name = "tests/renamed-minilm"


class CountingEncoder(MiniLMOnnxInt8Encoder):
    """The configured model, counting the texts it is given: a paper embedded twice shows."""

    def __init__(self) -> None:
        super().__init__(threads=1)
        self.texts: list[str] = []

    def encode(self, texts):
        self.texts.extend(texts)
        return super().encode(texts)


def stored_vector(paper) -> np.ndarray:
    row = PaperEmbedding.objects.get(paper=paper)
    return from_stored([row.vector], row.dimensions)[0]


def test_the_bundled_model_places_related_texts_near_each_other():
    encoder = text_encoder()
    vectors = encoder.encode(
        [
            "Quantum error correction with surface codes",
            "Topological codes for fault-tolerant quantum computation",
            "Dark matter halo profiles in dwarf galaxies",
        ]
    )
    assert vectors.shape == (3, encoder.dimensions) == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.3
    assert encoder.name == "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"


def test_paper_text_is_title_then_abstract_with_whitespace_folded():
    assert paper_text("A  title\n", " An\nabstract. ") == "A title. An abstract."
    assert paper_text("Only a title", "") == "Only a title"


def test_vectors_are_stored_with_the_model_name_and_match_the_model(paper_factory):
    paper = paper_factory(title="Graph neural networks for molecules", abstract="We learn.")
    assert embed_papers([paper.pk]) == 1
    row = PaperEmbedding.objects.get(paper=paper)
    assert (row.model, row.dimensions, row.source_hash) == (
        text_encoder().name,
        384,
        paper.source_hash,
    )
    expected = text_encoder().encode([paper_text(paper.title, paper.abstract)])[0]
    assert float(stored_vector(paper) @ expected) > 0.999  # float16 storage
    assert embed_papers([paper.pk]) == 0  # current: left alone


def test_a_changed_paper_or_another_model_makes_it_pending_again(paper_factory):
    paper = paper_factory(title="Spin glasses", source_hash="one")
    other = paper_factory(title="Deleted one", is_deleted=True)
    embed_papers([paper.pk, other.pk])
    assert not papers_pending().filter(pk=paper.pk).exists()
    assert not PaperEmbedding.objects.filter(paper=other).exists()  # deleted: never embedded

    renamed = RenamedMiniLM()
    assert list(papers_pending(renamed).values_list("pk", flat=True)) == [paper.pk]
    assert embed_papers([paper.pk], encoder=renamed) == 1
    assert PaperEmbedding.objects.get(paper=paper).model == "tests/renamed-minilm"
    assert papers_pending().filter(pk=paper.pk).exists()  # the configured model's turn again

    embed_papers([paper.pk])
    paper.title = "Spin glasses and replica symmetry breaking"
    paper.source_hash = "two"
    paper.save()
    assert papers_pending().filter(pk=paper.pk).exists()
    assert embed_papers([paper.pk]) == 1
    assert PaperEmbedding.objects.get(paper=paper).source_hash == "two"


def test_the_backfill_resumes_where_it_stopped(paper_factory):
    papers = [paper_factory(title=f"Topic number {n} in condensed matter") for n in range(5)]
    seen = []
    assert embed_pending(batch_size=2, limit=2, progress=seen.append) == 2
    assert seen == [2]
    assert papers_pending().count() == 3
    # A rerun (after an interruption) takes only what is still pending.
    assert embed_pending(batch_size=2, progress=seen.append) == 3
    assert seen == [2, 2, 1]
    assert papers_pending().count() == 0
    assert PaperEmbedding.objects.filter(paper__in=papers).count() == 5


def test_the_backfill_command_reports_progress_and_what_is_left(paper_factory):
    for n in range(3):
        paper_factory(title=f"Photonic crystals {n}")
    out, err = io.StringIO(), io.StringIO()
    call_command("embed_papers", limit=2, batch_size=2, stdout=out, stderr=err)
    assert "3 papers pending" in out.getvalue()
    assert "embedded 2 papers; 1 still pending" in out.getvalue()
    assert "embedding" in err.getvalue() and "2/2" in err.getvalue()  # the progress bar
    out = io.StringIO()
    call_command("embed_papers", no_progress=True, stdout=out)
    assert "embedded 1 papers; 0 still pending" in out.getvalue()


def test_saved_vectors_load_only_for_unchanged_papers(paper_factory, tmp_path):
    kept = paper_factory(title="Neutrino oscillations", source_hash="a")
    changed = paper_factory(title="Cosmic rays", source_hash="b")
    embed_papers([kept.pk, changed.pk])
    path = tmp_path / "vectors.npz"
    assert embeddings_save(path) == 2
    original = stored_vector(kept)
    PaperEmbedding.objects.all().delete()
    changed.source_hash = "c"
    changed.save()
    assert embeddings_load(path) == 1
    assert np.allclose(stored_vector(kept), original)
    assert list(papers_pending().values_list("pk", flat=True)) == [changed.pk]
    assert embeddings_load(path, encoder=RenamedMiniLM()) == 0  # another model's file


def test_papers_are_embedded_once_their_write_commits(
    paper_factory, settings, django_capture_on_commit_callbacks
):
    settings.EMBED_AFTER_WRITES = True  # tasks run inline here (no broker)
    paper = paper_factory(title="Superconducting qubits")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        embed_enqueue([paper.pk, paper.pk])
    assert not PaperEmbedding.objects.exists()  # not before the commit
    for callback in callbacks:
        callback()
    assert PaperEmbedding.objects.filter(paper=paper).count() == 1


def test_without_a_broker_writes_leave_embedding_to_the_command(
    paper_factory, settings, django_capture_on_commit_callbacks
):
    assert settings.EMBED_AFTER_WRITES is False  # the embedded default: no broker
    paper = paper_factory()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        embed_enqueue([paper.pk])
    assert callbacks == []


@pytest.mark.parametrize("queue_task", ["papers.embed_papers", "papers.embed_pending"])
def test_embedding_tasks_have_their_own_queue(settings, queue_task):
    assert settings.CELERY_TASK_ROUTES[queue_task]["queue"] == "embed"
    assert any(
        entry["task"] == "papers.embed_pending" for entry in settings.CELERY_BEAT_SCHEDULE.values()
    )


def hold(papers, *, seconds: int = 600, token: str = "another-batch") -> None:
    """What another worker's batch holds: its claims, as wovepaper.lib.leases writes them."""
    until = timezone.now() + timedelta(seconds=seconds)
    PaperEmbeddingClaim.objects.bulk_create(
        [PaperEmbeddingClaim(paper=p, claim=token, claimed_until=until) for p in papers]
    )


def test_papers_another_batch_holds_are_left_to_it_until_its_lease_lapses(paper_factory):
    papers = [paper_factory(title=f"Magnetic skyrmions {n}") for n in range(4)]
    hold(papers[:2])
    encoder = CountingEncoder()
    assert embed_papers([p.pk for p in papers], encoder=encoder) == 2
    assert len(encoder.texts) == 2  # the held two were never given to the model
    assert set(PaperEmbedding.objects.values_list("paper_id", flat=True)) == {
        p.pk for p in papers[2:]
    }
    # The batch dropped its own claims with its vectors; the other batch's are still there.
    assert set(PaperEmbeddingClaim.objects.values_list("claim", flat=True)) == {"another-batch"}
    # The holder died: once its lease is over the papers are free again.
    PaperEmbeddingClaim.objects.update(claimed_until=timezone.now() - timedelta(seconds=1))
    assert embed_papers([p.pk for p in papers], encoder=encoder) == 2
    assert len(encoder.texts) == 4
    assert not PaperEmbeddingClaim.objects.exists()


def test_a_batch_starts_past_the_last_id_and_skips_held_papers(paper_factory, settings):
    settings.EMBED_BATCH_SIZE = 2
    papers = [paper_factory(title=f"Cold atoms in optical lattices {n}") for n in range(5)]
    hold(papers[:1])
    encoder = CountingEncoder()
    assert embed_next_batch(encoder=encoder) == (2, papers[2].pk)
    assert embed_next_batch(after=papers[2].pk, encoder=encoder) == (2, papers[4].pk)
    assert embed_next_batch(after=papers[4].pk, encoder=encoder) == (0, None)
    assert len(encoder.texts) == 4
    assert list(papers_pending().values_list("pk", flat=True)) == [papers[0].pk]


def test_a_sweep_batch_delivered_twice_embeds_nothing_the_second_time(paper_factory, settings):
    settings.EMBED_BATCH_SIZE = 3
    papers = [paper_factory(title=f"Fast radio bursts {n}") for n in range(3)]
    first = tasks.embed_pending.apply(kwargs={"after": 0}).get()
    assert first["embedded"] == 3
    stored = {e.paper_id: e.embedded_at for e in PaperEmbedding.objects.all()}
    again = tasks.embed_pending.apply(kwargs={"after": 0}).get()
    assert again == {"embedded": 0, "last": None}
    assert {e.paper_id: e.embedded_at for e in PaperEmbedding.objects.all()} == stored
    assert len(stored) == len(papers)


def test_each_batch_sends_its_papers_to_the_vector_index_when_it_commits(paper_factory, settings):
    settings.EMBED_BATCH_SIZE = 2
    settings.VECTOR_ENGINE = "usearch"
    papers = [paper_factory(title=f"Gravitational lensing {n}") for n in range(5)]

    def sent_to_the_index() -> list[list[int]]:
        # Each callback waiting for the test's transaction to commit: (savepoints, call, robust).
        return [
            [pk for (ids,) in call.args[1] for pk in ids]
            for _, call, _ in connection.run_on_commit
            if getattr(call, "args", ())[:1] == ("search.index_vectors",)
        ]

    seen = []
    embed_pending(progress=lambda written: seen.append(len(sent_to_the_index())))
    assert seen == [1, 2, 3]  # one send per batch, as each batch committed
    assert sorted(pk for ids in sent_to_the_index() for pk in ids) == [p.pk for p in papers]
