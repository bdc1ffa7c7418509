"""tantivy's any-word ranking (hybrid search's fallback when no paper has every word) leaves
out the words most documents hold, keeping the rarest (wovepaper.lib.search.tantivy)."""

from __future__ import annotations

import pytest

from papers.models import Paper
from papers.search import PAPERS
from wovepaper.lib.search import SearchQuery, backend_for, reset_backends


@pytest.fixture
def tantivy_papers(settings, tmp_path, db):
    settings.SEARCH_ENGINE = "tantivy"
    settings.SEARCH_INDEX_DIR = tmp_path / "search-index"
    reset_backends()

    def sync():
        backend = backend_for(PAPERS)
        backend.index(list(Paper.objects.values_list("pk", flat=True)))
        return backend

    yield sync
    reset_backends()


def test_any_word_leaves_out_a_word_most_papers_hold(tantivy_papers, paper_factory):
    for number in range(8):  # "model" in 8 of 10 papers: past ANY_WORD_COMMON_SHARE
        paper_factory(title=f"A model {number}", abstract="Model building.")
    lattice = paper_factory(title="Lattice paths", abstract="On a lattice.")
    gauge = paper_factory(title="Gauge choices", abstract="Gauge fields.")
    backend = tantivy_papers()
    found = backend.search(SearchQuery(text="lattice gauge model", any_word=True, counted=False))
    assert sorted(found.items) == sorted([lattice.pk, gauge.pk])
    # The two rarest words are kept whatever their share, so a common word still counts in a
    # short query; and every-word search is untouched.
    two = backend.search(SearchQuery(text="lattice model", any_word=True))
    assert two.items[0] == lattice.pk and two.total == 9
    assert backend.search(SearchQuery(text="model building")).total == 8
