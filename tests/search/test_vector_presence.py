"""Hybrid search asks on every query whether any vectors exist. With none (a new deployment, a
bulk import not embedded yet) the answer is remembered in the cache instead of asked of the
database per search, and the first vectors written are seen at once."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from papers.search import PAPERS
from papers.search.embedding_stage import embed_papers
from tests.search.test_vectors import VECTOR_ENGINES
from wovepaper.lib.search import backend_for, reset_backends


@pytest.fixture(params=VECTOR_ENGINES)
def semantic(request, settings):
    # usearch without an index file, and pgvector, take the exact backend's answer.
    settings.VECTOR_ENGINE = request.param
    settings.VECTOR_DATABASE = "vectors"
    reset_backends()
    return backend_for(PAPERS, "semantic")


def queries(function) -> tuple[int, object]:
    with CaptureQueriesContext(connection) as captured:
        result = function()
    return len(captured), result


def test_no_vectors_is_asked_of_the_database_once(semantic, paper_factory):
    paper_factory()
    assert queries(semantic.has_vectors) == (1, False)
    assert queries(semantic.has_vectors) == (0, False)


def test_the_first_vectors_written_are_seen_at_once(
    semantic, paper_factory, django_capture_on_commit_callbacks
):
    paper = paper_factory(title="Black hole thermodynamics", abstract="Hawking radiation.")
    assert semantic.has_vectors() is False
    with django_capture_on_commit_callbacks(execute=True):
        embed_papers([paper.pk], feed_index=False)
    assert semantic.has_vectors() is True
