"""Papers' sentence embeddings: the real bundled model (no download), stored with its name,
re-embedded when the text or the model changes, fed after commit, backfilled resumably."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import call_command

from papers.models import PaperEmbedding
from papers.search.embedding_stage import (
    embed_enqueue,
    embed_papers,
    embed_pending,
    embeddings_load,
    embeddings_save,
    paper_text,
    papers_pending,
)
from wovepaper.lib.embeddings import MiniLMEncoder, from_stored, text_encoder


class RenamedMiniLM(MiniLMEncoder):
    """The same weights under another name: what a change of model looks like to the store."""

    name = "tests/renamed-minilm"


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
