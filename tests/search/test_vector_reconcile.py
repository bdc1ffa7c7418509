"""The vector index compared with the stored vectors (wovepaper.lib.search.engine_feed.
vectors_reconcile): what a lost `search.index_vectors` message left out, and what the index
holds of a deleted paper or a changed text, is found range by range and written again, by the
search worker's periodic round and by `manage.py catch_up`, each saying how many."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import call_command

from papers.models import Paper, PaperEmbedding
from papers.search import PAPERS
from papers.search.embedding_stage import embed_papers
from tests.search.test_vectors import PGVECTOR, _five_embedded_papers
from wovepaper.lib.search import backend_for, reset_backends
from wovepaper.lib.search.engine_feed import reconcile_vectors_task, vectors_reconcile


@pytest.fixture(params=["usearch", PGVECTOR])
def drifted(request, settings, tmp_path, paper_factory):
    """Five papers embedded and indexed; then three embedded whose index messages were lost,
    one indexed paper deleted and one whose text changed, neither told to the index."""
    settings.VECTOR_ENGINE = request.param
    settings.VECTOR_DATABASE = "vectors"
    settings.VECTOR_INDEX_DIR = tmp_path / "vector-index"
    settings.VECTOR_RECONCILE_RANGE = 2  # many ranges, their edges crossed
    reset_backends()
    cache.clear()
    indexed = _five_embedded_papers(paper_factory)
    lost = [paper_factory(title=f"Lost paper {n}", abstract="Never indexed.") for n in range(3)]
    embed_papers([p.pk for p in lost], feed_index=False)
    Paper.objects.filter(pk=indexed[0].pk).update(is_deleted=True)
    Paper.objects.filter(pk=indexed[1].pk).update(source_hash="changed, not embedded yet")
    yield indexed, lost
    reset_backends()


def held(ids) -> set[int]:
    return backend_for(PAPERS, "semantic").held(ids)


def test_a_round_writes_what_the_index_lacks_and_drops_what_is_no_longer_current(drifted):
    indexed, lost = drifted
    everyone = [p.pk for p in indexed + lost]
    assert held(everyone) == {p.pk for p in indexed}
    seen = vectors_reconcile(PAPERS)
    assert seen is not None
    assert (seen.examined, seen.missing, seen.extra, seen.repaired, seen.last) == (
        8,
        3,
        2,
        5,
        None,
    )
    assert held(everyone) == {p.pk for p in indexed[2:] + lost}
    again = vectors_reconcile(PAPERS)
    assert again is not None and (again.missing, again.extra, again.repaired) == (0, 0, 0)


def test_the_periodic_round_walks_on_from_where_it_stopped(drifted, settings):
    indexed, lost = drifted
    settings.VECTOR_RECONCILE_NEWEST = 0
    settings.VECTOR_RECONCILE_ROWS = 4  # two ranges a round: the walk takes two rounds
    ids = sorted(PaperEmbedding.objects.values_list("paper_id", flat=True))
    first = reconcile_vectors_task()["papers"]
    assert first.startswith("4 stored vectors examined, 0 missing from the index, 2 there")
    assert held(ids[:4]) == set(ids[2:4]) and held(ids[4:]) == set(ids[4:5])
    second = reconcile_vectors_task()["papers"]
    assert second.startswith("4 stored vectors examined, 3 missing from the index, 0 there")
    assert held(ids) == {p.pk for p in indexed[2:] + lost}
    # Past the end the walk starts again from the first id.
    assert reconcile_vectors_task()["papers"].startswith("4 stored vectors examined, 0 missing")


def test_the_newest_are_compared_every_round(drifted, settings):
    indexed, lost = drifted
    settings.VECTOR_RECONCILE_NEWEST = 3
    settings.VECTOR_RECONCILE_ROWS = 2  # the walk alone reaches them only after four rounds
    reconcile_vectors_task()
    assert held([p.pk for p in lost]) == {p.pk for p in lost}


def test_catch_up_without_a_broker_repairs_here_and_says_how_many(drifted):
    indexed, lost = drifted
    out = StringIO()
    call_command("catch_up", "--only", "vectors", stdout=out)
    engine = backend_for(PAPERS, "semantic").engine
    assert (
        f"vector index ({engine}) of papers: 8 stored vectors examined; missing from the "
        "index: 3; there without a current vector: 2; repaired here: 5"
    ) in out.getvalue()
    assert held([p.pk for p in lost]) == {p.pk for p in lost}


def test_there_is_nothing_to_compare_before_an_index_is_written_or_with_the_exact_engine(
    settings, tmp_path, paper_factory
):
    settings.VECTOR_INDEX_DIR = tmp_path / "vector-index"
    paper = paper_factory(title="Embedded, never indexed", abstract="On qubits.")
    embed_papers([paper.pk], feed_index=False)
    for engine, why in (
        ("usearch", "none written yet; searches read the stored vectors meanwhile"),
        ("exact", "the exact engine reads the stored vectors themselves"),
    ):
        settings.VECTOR_ENGINE = engine
        reset_backends()
        assert vectors_reconcile(PAPERS) is None
        out = StringIO()
        call_command("catch_up", "--only", "vectors", stdout=out)
        assert out.getvalue() == f"vector index ({engine}) of papers: nothing to compare ({why})\n"
    reset_backends()
