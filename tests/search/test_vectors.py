"""Search by meaning: the same contract for each vector backend (exact numpy, the usearch
index file), fusion with keyword search, and the index's life (incremental, memory-mapped,
replaced whole)."""

from __future__ import annotations

from datetime import date

import pytest

from papers.embedding import embed_papers
from papers.models import Paper
from papers.search import PAPERS, paper_search
from wovepaper.lib.search import SearchQuery, Term, backend_for, reset_backends
from wovepaper.lib.search.base import Range
from wovepaper.lib.search.hybrid import reciprocal_rank_fusion

TOPICS = [
    ("Surface codes for quantum error correction", "Fault-tolerant qubits.", "quant-ph", 2021),
    ("Decoding topological quantum codes", "Logical error rates of qubits.", "quant-ph", 2023),
    ("Dark matter in dwarf spheroidal galaxies", "Halo density profiles.", "astro-ph.GA", 2022),
    ("Convolutional networks for image classification", "Deep learning.", "cs.CV", 2020),
    ("Protein folding predicted by neural networks", "Structures of proteins.", "q-bio.BM", 2024),
]


@pytest.fixture(params=["exact", "usearch"])
def vector_engine(request, settings, paper_factory):
    """Each contract test runs once per vector backend, over the same five embedded papers."""
    settings.VECTOR_ENGINE = request.param
    reset_backends()
    papers = []
    for title, abstract, category, year in TOPICS:
        papers.append(
            paper_factory(
                title=title,
                abstract=abstract,
                categories=[category],
                published=date(year, 6, 1).isoformat() + "T00:00:00Z",
            )
        )
    embed_papers([p.pk for p in papers], feed_index=False)
    backend = backend_for(PAPERS, "semantic")
    backend.index([p.pk for p in papers])
    return papers


def semantic(text: str, **options) -> list[int]:
    return backend_for(PAPERS, "semantic").search(SearchQuery(text=text, **options)).items


def test_a_paraphrase_with_no_shared_word_finds_its_paper(vector_engine):
    surface, decoding, dark, vision, protein = vector_engine
    found = semantic("correcting mistakes in quantum computers")
    assert found[:2] in ([surface.pk, decoding.pk], [decoding.pk, surface.pk])
    assert semantic("how do proteins get their shape")[0] == protein.pk
    assert semantic("what galaxies are made of")[0] == dark.pk


def test_filters_and_sorts_hold_over_the_nearest(vector_engine):
    surface, decoding, dark, vision, protein = vector_engine
    assert semantic("quantum", filters=(Term("categories", "astro-ph.GA"),)) == [dark.pk]
    recent = semantic("quantum codes", filters=(Range("published", gte=date(2022, 1, 1)),))
    assert surface.pk not in recent and decoding.pk in recent and vision.pk not in recent
    newest = semantic("anything at all", sort="newest")
    assert newest == [protein.pk, decoding.pk, dark.pk, surface.pk, vision.pk]
    page = backend_for(PAPERS, "semantic").search(SearchQuery(text="qubits", offset=1, limit=2))
    assert len(page.items) == 2 and page.approximate
    assert page.items == semantic("qubits", limit=5)[1:3]


def test_empty_text_finds_nothing_and_similar_to_leaves_the_paper_out(vector_engine):
    surface, decoding, *_ = vector_engine
    assert semantic("  ") == []
    similar = backend_for(PAPERS, "semantic").similar_to(surface.pk, 2)
    assert similar[0][0] == decoding.pk and surface.pk not in [i for i, _ in similar]
    assert 0.3 < similar[0][1] <= 1.0


def test_an_edited_paper_moves_once_reembedded_and_reindexed(vector_engine):
    surface, decoding, dark, vision, protein = vector_engine
    vision.title, vision.abstract = "Stellar streams in the Milky Way halo", "Galactic dynamics."
    vision.source_hash = "changed"
    vision.save()
    embed_papers([vision.pk], feed_index=False)
    backend_for(PAPERS, "semantic").index([vision.pk])
    assert vision.pk in semantic("galaxies and their halos")[:2]
    Paper.objects.filter(pk=dark.pk).update(is_deleted=True)
    backend_for(PAPERS, "semantic").index([dark.pk])
    assert dark.pk not in semantic("galaxies and their halos")


def test_the_index_file_is_memory_mapped_and_replaced_whole(settings, paper_factory):
    settings.VECTOR_ENGINE = "usearch"
    reset_backends()
    first = paper_factory(title="Black hole thermodynamics", abstract="Hawking radiation.")
    embed_papers([first.pk], feed_index=False)
    writer = backend_for(PAPERS, "semantic")
    assert not writer.path.exists()
    assert semantic("black holes") == [first.pk]  # no file yet: exact, from the database
    assert writer.rebuild() == 1
    assert writer.path.exists()

    # Another process (a web worker) maps the file; the writer adds a paper and saves.
    reader = type(writer)(PAPERS, PAPERS.vectors, directory=writer.directory)
    assert reader.search(SearchQuery(text="black holes")).items == [first.pk]
    second = paper_factory(title="Evaporating black holes", abstract="Radiation.")
    embed_papers([second.pk], feed_index=False)
    assert writer.index([second.pk]) == 1
    assert sorted(reader.search(SearchQuery(text="black holes")).items) == sorted(
        [first.pk, second.pk]
    )
    assert list(writer.directory.glob("*.partial")) == []


def test_reciprocal_rank_fusion_rewards_agreement():
    assert reciprocal_rank_fusion([1, 2, 3], [2, 3, 4]) == [2, 3, 1, 4]
    assert reciprocal_rank_fusion([], [5, 6]) == [5, 6]
    assert reciprocal_rank_fusion([7], [7]) == [7]


def test_hybrid_finds_what_either_ranking_alone_would(vector_engine):
    surface, decoding, dark, vision, protein = vector_engine
    # No word of this query is in the papers: keyword finds nothing, hybrid still answers.
    assert paper_search("correcting mistakes in quantum computers", mode="keyword").items == []
    hybrid = paper_search("correcting mistakes in quantum computers", mode="hybrid").items
    assert {hybrid[0].pk, hybrid[1].pk} == {surface.pk, decoding.pk}
    # A rare exact word that the model reads past: keyword ranks it first, so does hybrid.
    assert paper_search("spheroidal", mode="keyword").items[0] == dark
    assert paper_search("spheroidal", mode="hybrid").items[0] == dark
    # Date sorts are the keyword ranking's, exact.
    newest = paper_search("qubits", mode="hybrid", sort="newest").items
    assert newest == paper_search("qubits", mode="keyword", sort="newest").items


def test_semantic_mode_leaves_deleted_papers_out(vector_engine):
    surface, *_ = vector_engine
    Paper.objects.filter(pk=surface.pk).update(is_deleted=True)
    found = paper_search("surface codes quantum error correction", mode="semantic").items
    assert surface not in found and found


def test_vectors_of_another_model_are_never_searched(vector_engine, settings):
    settings.EMBEDDING_ENCODER = "tests.papers.test_embedding.RenamedMiniLM"
    reset_backends()
    assert semantic("quantum error correction") == []
