"""Search by meaning: the same contract for each vector backend (exact numpy, the usearch
index file), fusion with keyword search, and the index's life (batches in a delta beside the
memory-mapped main file, merged into a new main file, readers taking each new version)."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from django.db import connection, connections

from papers.models import Paper
from papers.search import PAPERS, paper_search
from papers.search.embedding_stage import embed_papers
from wovepaper.lib.search import SearchQuery, Term, backend_for, reset_backends
from wovepaper.lib.search import hybrid as hybrid_module
from wovepaper.lib.search.base import Range
from wovepaper.lib.search.engine_feed import merge_vectors
from wovepaper.lib.search.hybrid import fuse, reciprocal_rank_fusion
from wovepaper.lib.search.pgvector import EF_SEARCH_MAX, PgvectorBackend
from wovepaper.lib.search.vectors import ExactVectorBackend, UsearchBackend

TOPICS = [
    ("Surface codes for quantum error correction", "Fault-tolerant qubits.", "quant-ph", 2021),
    ("Decoding topological quantum codes", "Logical error rates of qubits.", "quant-ph", 2023),
    ("Dark matter in dwarf spheroidal galaxies", "Halo density profiles.", "astro-ph.GA", 2022),
    ("Convolutional networks for image classification", "Deep learning.", "cs.CV", 2020),
    ("Protein folding predicted by neural networks", "Structures of proteins.", "q-bio.BM", 2024),
]


# pgvector's table lives in the alias "vectors" (a PostgreSQL with the extension: the
# session's own pgserver, tests/conftest.py), on either vendor of the default database.
PGVECTOR = pytest.param(
    "pgvector", marks=pytest.mark.django_db(databases=["default", "vectors"]), id="pgvector"
)
VECTOR_ENGINES = ["exact", "usearch", PGVECTOR]


@pytest.fixture(params=VECTOR_ENGINES)
def vector_engine(request, settings, paper_factory):
    """Each contract test runs once per vector backend, over the same five embedded papers;
    the similarity floor off (these are about ranking: the floor has tests of its own)."""
    settings.VECTOR_ENGINE = request.param
    settings.SEARCH_SIMILARITY_FLOOR = -1.0
    settings.SEARCH_MEANING_EVIDENCE = False
    settings.VECTOR_DATABASE = "vectors"
    reset_backends()
    return _five_embedded_papers(paper_factory)


def _five_embedded_papers(paper_factory):
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
    if isinstance(backend, UsearchBackend):
        backend.merge()  # into the HNSW main file: the contract holds for it, not the delta
        assert backend.delta_path() is None
    if isinstance(backend, PgvectorBackend):
        assert backend.table_exists()  # searched in pgvector's table, not the exact fallback
    return papers


def semantic(text: str, **options) -> list[int]:
    return backend_for(PAPERS, "semantic").search(SearchQuery(text=text, **options)).items


def test_a_paraphrase_with_no_shared_word_finds_its_paper(vector_engine):
    surface, decoding, dark, vision, protein = vector_engine
    found = semantic("correcting mistakes in quantum computers")
    assert found[:2] in ([surface.pk, decoding.pk], [decoding.pk, surface.pk])
    assert semantic("how do proteins get their shape")[0] == protein.pk
    assert semantic("what galaxies are made of")[0] == dark.pk


def test_a_relevance_page_gives_each_item_its_cosine_similarity(vector_engine):
    surface, decoding, dark, vision, protein = vector_engine
    backend = backend_for(PAPERS, "semantic")
    page = backend.search(SearchQuery(text="what galaxies are made of", limit=5))
    assert page.items[0] == dark.pk and len(page.scores) == 5
    assert page.scores == sorted(page.scores, reverse=True)
    assert all(-1.0 <= s <= 1.0 for s in page.scores) and page.scores[0] > 0.2
    # The similarity of the paper's own vector to the query's, not of its rank.
    vector = backend.encoder.encode(["what galaxies are made of"])[0]
    ((own, similarity),) = backend.similar_to_vector(vector, 1)
    assert own == dark.pk and page.scores[0] == pytest.approx(similarity, abs=1e-4)
    filtered = backend.search(
        SearchQuery(text="what galaxies are made of", filters=(Term("categories", "cs.CV"),))
    )
    assert filtered.items == [vision.pk] and filtered.scores == [
        page.scores[page.items.index(vision.pk)]
    ]
    assert backend.search(SearchQuery(text="galaxies", sort="newest")).scores == []


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


def _stat(path):
    stat = path.stat()
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def test_the_index_is_memory_mapped_and_a_batch_leaves_the_main_file_alone(settings, paper_factory):
    settings.VECTOR_ENGINE = "usearch"
    reset_backends()
    first = paper_factory(title="Black hole thermodynamics", abstract="Hawking radiation.")
    embed_papers([first.pk], feed_index=False)
    writer = backend_for(PAPERS, "semantic")
    assert writer.main_path() is None
    assert semantic("black holes") == [first.pk]  # no index yet: exact, from the database
    assert writer.rebuild() == 1
    main = writer.main_path()
    assert main is not None and main.exists() and writer.delta_path() is None
    before = _stat(main)

    # Another process (a web worker) maps the index; the writer adds a paper in a batch.
    reader = type(writer)(PAPERS, PAPERS.vectors, directory=writer.directory)
    assert reader.search(SearchQuery(text="black holes")).items == [first.pk]
    version = reader.version()
    second = paper_factory(title="Evaporating black holes", abstract="Radiation.")
    embed_papers([second.pk], feed_index=False)
    assert writer.index([second.pk]) == 1
    # Findable at once, by the reader too, with the main file untouched: same inode, mtime
    # and size, still the one the manifest names.
    assert sorted(reader.search(SearchQuery(text="black holes")).items) == sorted(
        [first.pk, second.pk]
    )
    assert reader.version() != version
    assert writer.main_path() == main and _stat(main) == before
    assert writer.delta_path() is not None
    assert list(writer.directory.glob("*.partial")) == []


def test_a_merge_gives_the_same_results_and_readers_take_the_new_main_file(settings, paper_factory):
    settings.VECTOR_ENGINE = "usearch"
    reset_backends()
    surface, decoding, dark, vision, protein = _five_embedded_papers(paper_factory)
    writer = backend_for(PAPERS, "semantic")
    writer.rebuild()
    main = writer.main_path()
    reader = type(writer)(PAPERS, PAPERS.vectors, directory=writer.directory)
    # A replaced vector (an edited paper), a removed one (deleted) and an untouched main file.
    vision.title, vision.abstract = "Stellar streams in the Milky Way halo", "Galactic dynamics."
    vision.source_hash = "changed"
    vision.save()
    embed_papers([vision.pk], feed_index=False)
    Paper.objects.filter(pk=protein.pk).update(is_deleted=True)
    writer.index([vision.pk, protein.pk])
    assert writer.main_path() == main
    queries = ["galaxies and their halos", "how do proteins get their shape", "qubits"]
    before = {q: reader.search(SearchQuery(text=q)).items for q in queries}
    assert before["galaxies and their halos"][0] in (vision.pk, dark.pk)
    assert protein.pk not in before["how do proteins get their shape"]
    # The vectors it holds: the replaced one from the delta, none for the removed one.
    held = reader.vectors_of([vision.pk, protein.pk, surface.pk])
    _, (stored,) = PAPERS.vectors.vectors([vision.pk], writer.encoder.name)
    assert set(held) == {vision.pk, surface.pk}
    assert np.allclose(held[vision.pk], np.asarray(stored, dtype=np.float32), atol=1e-3)
    version = reader.version()

    assert writer.merge() == 1  # the delta held vision's new vector
    assert writer.main_path() != main and not main.exists() and writer.delta_path() is None
    assert reader.version() != version
    after = {q: reader.search(SearchQuery(text=q)).items for q in queries}
    assert after == before
    assert writer.merge() == 0  # nothing left to merge


def test_the_writer_merges_once_the_delta_is_full(settings, paper_factory):
    settings.VECTOR_ENGINE = "usearch"
    settings.VECTOR_DELTA_MAX = 2
    reset_backends()
    papers = [paper_factory(title=f"Black hole paper {n}", abstract="Hawking.") for n in range(3)]
    embed_papers([p.pk for p in papers], feed_index=False)
    writer = backend_for(PAPERS, "semantic")
    writer.index([papers[0].pk])
    main = writer.main_path()
    assert writer.delta_path() is not None
    writer.index([papers[1].pk])  # two in the delta: merged into a new main file
    assert writer.delta_path() is None and writer.main_path() != main
    assert sorted(semantic("black holes")) == sorted(p.pk for p in papers[:2])


def test_reciprocal_rank_fusion_rewards_agreement():
    assert reciprocal_rank_fusion([1, 2, 3], [2, 3, 4]) == [2, 3, 1, 4]
    assert reciprocal_rank_fusion([], [5, 6]) == [5, 6]
    assert reciprocal_rank_fusion([7], [7]) == [7]


def test_fusion_ranks_any_word_matches_after_full_ones_at_their_weight():
    # Keyword ranking: 1 has every word; 2 and 3 some (1 again among the any-word ranks).
    assert fuse([1], [2, 1, 3], []) == [1, 2, 3]
    # Semantic prefers 3; a partial keyword match of 2 outweighs it only at full weight.
    assert fuse([], [2], [3, 2], relaxed_weight=1.0)[0] == 2
    assert fuse([], [2], [3, 2], relaxed_weight=0.0)[0] == 3
    # A smaller k rewards first places more: 6, fourth in both, beats the two first places
    # at k=60, not at k=1.
    keyword, semantic = [7, 8, 9, 6], [5, 10, 11, 6]
    assert fuse(keyword, [], semantic, k=60)[0] == 6
    assert fuse(keyword, [], semantic, k=1)[:2] == [7, 5]


def test_hybrid_asks_for_any_word_only_when_no_paper_has_every_word(vector_engine):
    surface, decoding, dark, vision, protein = vector_engine
    hybrid = backend_for(PAPERS, "hybrid")
    keyword, relaxed, semantic = hybrid.rankings(SearchQuery(text="quantum galaxies"), 100)
    assert keyword.items == [] and len(semantic.items) == 5
    assert set(relaxed) == {surface.pk, decoding.pk, dark.pk}
    # One word: any word is every word, not asked again.
    keyword, relaxed, _ = hybrid.rankings(SearchQuery(text="quantum"), 100)
    assert set(keyword.items) == {surface.pk, decoding.pk} and relaxed == []
    # Some paper has every word: partial matches are not asked for.
    keyword, relaxed, _ = hybrid.rankings(SearchQuery(text="quantum codes"), 100)
    assert set(keyword.items) == {surface.pk, decoding.pk} and relaxed == []


def test_the_vocabulary_is_asked_once_for_the_content_words_and_only_when_it_decides(
    vector_engine, settings, monkeypatch
):
    """Whether a query means anything here asks which of its content words some paper holds
    (evidence.py): once, for those words alone, and only when its nearest paper is close
    enough or holds every word of it. Unfiltered, hybrid rankings that found none of the words
    settle it before the vocabulary or the vector index is asked; a filtered query's rankings
    may have missed them, so the vocabulary still decides."""
    settings.SEARCH_MEANING_EVIDENCE = True
    settings.SEARCH_MEANING_THRESHOLD = -1.0  # every nearest paper is close: the words decide
    settings.SEARCH_MEANING_WORD_SHARE = 0.5
    keyword = backend_for(PAPERS, "keyword")
    asked: list[list[str]] = []
    words_held = keyword.words_held
    monkeypatch.setattr(
        keyword, "words_held", lambda words: asked.append(words) or words_held(words)
    )

    surface, decoding, *_ = vector_engine
    page = paper_search("correcting mistakes in quantum computers", mode="hybrid")
    assert {p.pk for p in page.related[:2]} == {surface.pk, decoding.pk}
    assert asked == [["correcting", "mistakes", "quantum", "computers"]]
    asked.clear()
    assert semantic("correcting mistakes in quantum computers")[0] in {surface.pk, decoding.pk}
    assert len(asked) == 1
    asked.clear()
    vectors = backend_for(PAPERS, "semantic")
    nearest = vectors.nearest
    searched: list[int] = []
    monkeypatch.setattr(
        vectors, "nearest", lambda vector, count: searched.append(count) or nearest(vector, count)
    )
    made_up = paper_search("zzzqqqxx plimbo zentrix", mode="hybrid")
    assert made_up.items == [] and made_up.related == [] and asked == [] and searched == []
    in_vision = paper_search("zzzqqqxx plimbo zentrix", mode="hybrid", category="cs.CV")
    assert in_vision.items == [] and in_vision.related == [] and len(asked) == 1 and searched
    asked.clear()
    # A joined word is searched as a phrase of its parts: its ranking finding nothing does not
    # say its parts are not held ("knowledge-graph"), so the vocabulary decides.
    joined = paper_search("zzzqqqxx-plimbo", mode="hybrid")
    assert joined.related == [] and asked == [["zzzqqqxx-plimbo"]]
    asked.clear()
    settings.SEARCH_MEANING_THRESHOLD = 2.0  # no nearest paper is close enough
    assert semantic("correcting mistakes in quantum computers") == [] and asked == []


def test_below_the_threshold_a_nearest_paper_holding_the_words_decides_and_fixes_the_sense(
    vector_engine, settings
):
    """#43: a short phrase lies further from any abstract than a question does. With no
    nearest paper close enough, the query still means something when one of the nearest
    holds it as written (its words as a phrase), and then only papers near one of those are
    related (the words fix the sense)."""
    surface, decoding, dark, vision, protein = vector_engine
    settings.SEARCH_MEANING_EVIDENCE = True
    settings.SEARCH_MEANING_THRESHOLD = 2.0  # no nearest paper is close enough
    settings.SEARCH_MEANING_WORD_SHARE = 0.4
    assert set(semantic("qubits")) == {surface.pk, decoding.pk}
    settings.SEARCH_MEANING_SENSE_SIMILARITY = -1.0  # any paper is near enough to them
    assert len(semantic("qubits")) == 5
    # No paper holds both words, or the word at all: nothing is related.
    assert semantic("spheroidal qubits") == [] and semantic("zzzqqqxx") == []
    assert semantic("the of and") == []  # stop words say nothing
    # Both words held, but not as written: a phrase of them is held nowhere.
    assert semantic("codes surface") == [] and set(semantic("surface codes")) >= {surface.pk}
    settings.SEARCH_MEANING_NEAREST_HOLDING = 0  # the similarity alone decides
    assert semantic("qubits") == []


def test_a_paper_holding_the_words_counts_only_within_the_depth_and_above_the_floor(
    vector_engine, settings
):
    """The second way looks at SEARCH_MEANING_NEAREST_HOLDING nearest papers, and a paper
    holding the query there is evidence only when it is above the floor per paper: one no
    nearer than chance says nothing of what the query means ("banana" on the demo, whose one
    holder was its 58th nearest paper, at 0.145). "error rates": its nearest paper (on surface
    codes, 0.28) does not hold the phrase, its second (on decoding, 0.24) does."""
    surface, decoding, dark, vision, protein = vector_engine
    settings.SEARCH_MEANING_EVIDENCE = True
    settings.SEARCH_MEANING_THRESHOLD = 2.0  # no nearest paper is close enough
    settings.SEARCH_MEANING_WORD_SHARE = 0.4
    settings.SEARCH_MEANING_SENSE_SIMILARITY = -1.0  # any paper is near enough to its holders
    settings.SEARCH_SIMILARITY_FLOOR = 0.2
    assert semantic("error rates") == [surface.pk, decoding.pk]
    settings.SEARCH_MEANING_NEAREST_HOLDING = 1  # only the nearest, which does not hold it
    assert semantic("error rates") == []
    settings.SEARCH_MEANING_NEAREST_HOLDING = 101
    # The holder below the floor, the nearest above it: nothing is related.
    settings.SEARCH_SIMILARITY_FLOOR = 0.26
    assert semantic("error rates") == []


def test_an_index_gives_the_vectors_it_holds_as_the_source_stores_them(vector_engine):
    """The second way's sense compares stored vectors; an index answers them from memory."""
    backend = backend_for(PAPERS, "semantic")
    ids = [p.pk for p in vector_engine]
    found = backend.vectors_of([*ids, 10**9])  # an id with no vector is left out
    stored_ids, stored = backend.source.vectors(ids, backend.encoder.name)
    assert set(found) == set(stored_ids) == set(ids)
    for pk, row in zip(stored_ids, stored, strict=True):
        assert np.allclose(found[pk], np.asarray(row, dtype=np.float32), atol=1e-3)


def test_a_query_few_of_whose_words_any_paper_holds_means_nothing_here(vector_engine, settings):
    """One held word among made-up ones ("qubits" here, as "zab" in "zib zab zoob") is not
    enough: the share of the content words held must reach SEARCH_MEANING_WORD_SHARE."""
    settings.SEARCH_MEANING_EVIDENCE = True
    settings.SEARCH_MEANING_THRESHOLD = -1.0
    settings.SEARCH_MEANING_WORD_SHARE = 0.5
    query = "zorblat qubits quibbletoad"
    assert paper_search(query, mode="hybrid").related == [] and semantic(query) == []
    assert semantic("zorblat qubits") != []  # one word of two: half of them
    assert semantic("the of and") == []  # stop words say nothing
    settings.SEARCH_MEANING_WORD_SHARE = 0.0  # any one word held, as before #43's second rule
    assert semantic(query) != []


def test_hybrid_finds_what_either_ranking_alone_would(vector_engine):
    surface, decoding, dark, vision, protein = vector_engine
    # No word of this query is in the papers: keyword finds nothing, hybrid still answers.
    assert paper_search("correcting mistakes in quantum computers", mode="keyword").items == []
    hybrid = paper_search("correcting mistakes in quantum computers", mode="hybrid")
    assert hybrid.items == [] and hybrid.total == 0
    assert {hybrid.related[0].pk, hybrid.related[1].pk} == {surface.pk, decoding.pk}
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
    settings.EMBEDDING_ENCODER = "tests.papers.search.test_embedding_stage.RenamedMiniLM"
    reset_backends()
    assert semantic("quantum error correction") == []


def test_an_index_file_of_the_version_before_is_taken_as_the_main_file(settings, paper_factory):
    settings.VECTOR_ENGINE = "usearch"
    reset_backends()
    old, new = (
        paper_factory(title="Black hole thermodynamics", abstract="Hawking radiation."),
        paper_factory(title="Evaporating black holes", abstract="Radiation."),
    )
    embed_papers([old.pk, new.pk], feed_index=False)
    writer = backend_for(PAPERS, "semantic")
    writer.index([old.pk])
    writer.merge()
    # One file named as before, and no manifest: what a deployment upgrading has.
    writer.main_path().rename(writer.directory / f"{writer.base}.usearch")
    writer.manifest.unlink()
    reset_backends()
    writer = backend_for(PAPERS, "semantic")
    assert semantic("black holes") == [old.pk]  # the old file, not the database's vectors
    writer.index([new.pk])
    assert writer.main_path() == writer.directory / f"{writer.base}.usearch"
    assert sorted(semantic("black holes")) == sorted([old.pk, new.pk])
    writer.merge()
    assert not (writer.directory / f"{writer.base}.usearch").exists()
    assert sorted(semantic("black holes")) == sorted([old.pk, new.pk])


def test_the_beat_task_merges_each_collection_with_vectors(settings, paper_factory):
    settings.VECTOR_ENGINE = "usearch"
    reset_backends()
    paper = paper_factory(title="Black hole thermodynamics", abstract="Hawking radiation.")
    embed_papers([paper.pk], feed_index=False)
    writer = backend_for(PAPERS, "semantic")
    writer.index([paper.pk])
    assert merge_vectors() == {"papers": 1}
    assert writer.delta_path() is None and semantic("black holes") == [paper.pk]
    assert merge_vectors() == {"papers": 0}


# --- pgvector's own: its table, its index, the rebuild, the detection ------------------------


def _pgvector(settings):
    settings.VECTOR_ENGINE = "pgvector"
    settings.VECTOR_DATABASE = "vectors"
    reset_backends()
    return backend_for(PAPERS, "semantic")


@pytest.mark.django_db(databases=["default", "vectors"])
def test_pgvector_keeps_an_hnsw_index_over_cosine_distance(settings, paper_factory):
    backend = _pgvector(settings)
    surface, *_ = _five_embedded_papers(paper_factory)
    with connections["vectors"].cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s", [backend.table])
        definitions = " ".join(row[0] for row in cursor.fetchall())
        cursor.execute(f"SELECT count(*) FROM {backend.table}")
        assert cursor.fetchone()[0] == 5
    assert "USING hnsw (embedding vector_cosine_ops)" in definitions
    # Past what an HNSW scan returns, the table is read whole: the same order as exact.
    vector = backend.source.vectors([surface.pk], backend.encoder.name)[1][0]
    ids, distances = backend.nearest(vector, EF_SEARCH_MAX + 1)
    exact = ExactVectorBackend(PAPERS, PAPERS.vectors).nearest(vector, EF_SEARCH_MAX + 1)
    assert ids == exact[0] and ids[0] == surface.pk
    assert abs(distances - exact[1]).max() < 1e-3  # the stored float16, read as float32


@pytest.mark.django_db(databases=["default", "vectors"])
def test_pgvector_rebuild_replaces_the_table_from_the_source(settings, paper_factory):
    first = paper_factory(title="Black hole thermodynamics", abstract="Hawking radiation.")
    second = paper_factory(title="Evaporating black holes", abstract="Radiation.")
    embed_papers([first.pk, second.pk], feed_index=False)
    backend = _pgvector(settings)
    assert not backend.table_exists()
    assert semantic("black holes") and backend.version() == PAPERS.vectors.version(
        backend.encoder.name
    )  # no table yet: exact, from the database
    backend.index([first.pk])
    version = backend.version()
    assert semantic("black holes") == [first.pk]  # the table, which holds one so far
    Paper.objects.filter(pk=first.pk).update(is_deleted=True)
    assert backend.rebuild() == 1
    assert backend.version() != version
    assert semantic("black holes") == [second.pk]
    with connections["vectors"].cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s)", [f"{backend.table}_building"])
        assert cursor.fetchone()[0] is None


@pytest.mark.django_db(databases=["default", "vectors"])
def test_auto_takes_pgvector_where_the_extension_is_available(settings):
    settings.VECTOR_ENGINE = "auto"
    settings.VECTOR_DATABASE = "vectors"
    reset_backends()
    assert isinstance(backend_for(PAPERS, "semantic"), PgvectorBackend)
    settings.VECTOR_DATABASE = "default"
    reset_backends()
    available = False
    if connection.vendor == "postgresql":  # Debian 12's PostgreSQL has no pgvector: usearch
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            available = cursor.fetchone() is not None
    expected = PgvectorBackend if available else UsearchBackend
    assert type(backend_for(PAPERS, "semantic")) is expected


@pytest.fixture(params=VECTOR_ENGINES)
def floored(request, settings, paper_factory):
    """The five papers, with the default encoder's similarity floor (0.45)."""
    settings.VECTOR_ENGINE = request.param
    settings.VECTOR_DATABASE = "vectors"
    settings.SEARCH_SIMILARITY_FLOOR = 0.45
    reset_backends()
    return _five_embedded_papers(paper_factory)


def test_below_the_similarity_floor_nothing_is_found_by_meaning(floored):
    surface, decoding, dark, vision, protein = floored
    backend = backend_for(PAPERS, "semantic")
    # Cosines 0.65 and 0.57; the other three are under 0.15.
    page = backend.search(SearchQuery(text="correcting mistakes in quantum computers"))
    assert page.items == [surface.pk, decoding.pk] and page.total == 2
    assert not page.total_is_capped and min(page.scores) >= 0.45
    # "More than" only when more lie above the floor than the page holds.
    one = backend.search(SearchQuery(text="correcting mistakes in quantum computers", limit=1))
    assert one.items == [surface.pk] and one.total_is_capped
    assert backend.search(SearchQuery(text="zzzqqqxx")).items == []
    filtered = backend.search(
        SearchQuery(
            text="correcting mistakes in quantum computers", filters=(Term("categories", "cs.CV"),)
        )
    )
    assert filtered.items == []  # the vision paper is in the pool, not above the floor


def test_hybrid_says_which_papers_contain_the_words_and_which_are_related(floored):
    surface, decoding, dark, vision, protein = floored
    # No paper has "noise"; both qubit papers are close in meaning (0.47, 0.48).
    found = paper_search("noise in qubits", mode="hybrid")
    assert found.items == [] and found.total == 0
    assert {p.pk for p in found.related} == {surface.pk, decoding.pk}
    assert all(s >= 0.45 for s in found.related_scores)
    # Words and meaning: the dark matter paper has both words; nothing else is close.
    found = paper_search("dark matter", mode="hybrid")
    assert [p.pk for p in found.items] == [dark.pk] and found.total == 1 and found.related == []
    # Nothing contains it, nothing means it.
    found = paper_search("zzzqqqxx", mode="hybrid")
    assert (found.items, found.total, found.related) == ([], 0, [])
    # A later page: only the word matches, no related part.
    assert paper_search("noise in qubits", mode="hybrid", offset=20).related == []


def test_related_leaves_out_word_matches_the_keyword_page_did_not_hold(floored, monkeypatch):
    surface, decoding, dark, vision, protein = floored
    # Only the first word match is held (a fusion depth of 1, a page of 1): the other paper
    # with "qubits" is close in meaning but contains the word, so it is not "related".
    monkeypatch.setattr(hybrid_module, "FUSED", 1)
    found = paper_search("qubits", mode="hybrid", limit=1)
    assert found.total == 2 and len(found.items) == 1
    assert found.related == []


def test_the_vector_batches_hold_every_current_vector_once_in_id_order(paper_factory):
    # Batches of 3 over 10 stored vectors: a stale one (the paper changed since), a deleted
    # paper's, another model's; a whole batch range of stale ones does not end the walk.
    from papers.models import PaperEmbedding
    from papers.search.vectors import paper_vector_batches
    from wovepaper.lib.embeddings import to_stored

    papers = [paper_factory(title=f"Paper {n}") for n in range(12)]
    vectors = np.eye(12, 4, dtype=np.float32) + 0.5
    for paper, vector in zip(papers, vectors, strict=True):
        PaperEmbedding.objects.create(
            paper=paper,
            model="m",
            source_hash=paper.source_hash,
            dimensions=4,
            vector=to_stored(vector[None, :])[0],
        )
    stale = papers[3:6]  # the whole second batch
    PaperEmbedding.objects.filter(paper__in=stale).update(source_hash="older")
    Paper.objects.filter(pk=papers[7].pk).update(is_deleted=True)
    PaperEmbedding.objects.filter(paper=papers[9]).update(model="another")
    batches = list(paper_vector_batches(3, "m"))
    kept = [p.pk for i, p in enumerate(papers) if i not in (3, 4, 5, 7, 9)]
    assert [i for ids, _ in batches for i in ids] == kept
    assert all(len(ids) <= 3 and rows.shape == (len(ids), 4) for ids, rows in batches)
    first_ids, first_rows = batches[0]
    assert np.allclose(first_rows[0], vectors[0], atol=1e-3)


@pytest.mark.parametrize("sort", ["newest", "oldest", "cited"])
def test_a_sorted_page_relates_what_the_relevance_page_relates(vector_engine, sort):
    """#43: a date order has no keyword ranking to leave the word matches out of the
    related papers; it asks which of the nearest hold the words, and relates the same
    papers as the relevance page."""
    surface, decoding, dark, vision, protein = vector_engine
    matches = {surface.pk, decoding.pk}  # the papers with "qubits"
    best = paper_search("qubits", mode="hybrid", limit=3)
    assert best.total == 2 and {p.pk for p in best.items} == matches
    related = [p.pk for p in best.related]
    # Related by meaning in the order of meaning: the semantic ranking's, without the matches.
    assert related == [i for i in semantic("qubits", limit=5) if i not in matches][:3]
    ordered = paper_search("qubits", mode="hybrid", limit=3, sort=sort)
    assert {p.pk for p in ordered.items} == matches
    assert {p.pk for p in ordered.related} == set(related)
