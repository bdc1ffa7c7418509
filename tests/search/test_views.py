"""The search page on an engine: form, one selector, render; and what it says about counts."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from papers.search import PAPERS, database
from wovepaper.lib.negotiation import wants_markdown


@pytest.mark.parametrize(
    "accept,markdown",
    [
        ("text/markdown", True),
        ("text/html;q=0.9, text/markdown", True),
        ("text/markdown, text/html", True),
        ("text/markdown;q=0.5, text/html", False),
        ("text/html, text/markdown;q=0", False),
        ("*/*", False),
        ("", False),
    ],
)
def test_markdown_is_chosen_by_accept_preferences(accept, markdown):
    request = RequestFactory().get("/", HTTP_ACCEPT=accept)
    assert wants_markdown(request) is markdown


def test_search_page_answers_from_the_engine(engine, client, paper_factory):
    paper = paper_factory(title="Quasicrystal diffraction", categories=["math-ph"])
    paper_factory(title="Quasicrystal growth", categories=["cond-mat.mtrl-sci"])
    engine()
    html = client.get("/search", {"q": "quasicrystal"}).content.decode()
    assert "2 papers contain the word “quasicrystal”" in html and "Quasicrystal diffraction" in html
    html = client.get("/search", {"q": "quasicrystal", "category": "math-ph"}).content.decode()
    assert "1 paper contains the word “quasicrystal”" in html
    assert paper.title in html and "growth" not in html
    md = client.get("/search", {"q": "quasicrystal"}, HTTP_ACCEPT="text/markdown").content
    assert "## Papers that contain the word (2)" in md.decode()


@pytest.mark.postgres
def test_search_page_says_when_ranking_is_over_a_bounded_pool(client, paper_factory, monkeypatch):
    for n in range(3):
        paper_factory(title=f"Percolation threshold {n}")
    monkeypatch.setattr(database, "COUNT_CAP", 2)
    html = client.get("/search", {"q": "percolation"}).content.decode()
    assert "More than 2 papers" in html and "ranked among the first 2 found" in html
    html = client.get("/search", {"q": "percolation", "sort": "newest"}).content.decode()
    assert "More than 2 papers" in html and "ranked among" not in html


def test_search_pages_to_the_end_past_the_hundredth_page(engine, client, monkeypatch):
    """2,030 matches: page 203 is the last, reachable by number and linked from the first."""
    from datetime import UTC, datetime, timedelta

    from papers.models import Paper
    from papers.search.postgres_documents import search_index_papers
    from wovepaper.lib.search import tantivy

    start = datetime(2000, 1, 1, tzinfo=UTC)
    papers = Paper.objects.bulk_create(
        Paper(
            arxiv_id=f"0001.{n:05d}",
            title=f"Lattice gauge study {n}",
            abstract="Lattice gauge theory.",
            authors="Ada Lovelace",
            categories="hep-lat",
            primary_category="hep-lat",
            published=start + timedelta(days=n),
            slug=f"lattice-gauge-study-{n}",
        )
        for n in range(2030)
    )
    search_index_papers([p.pk for p in papers])
    engine()
    # The engine's guard against hand-typed deep offsets is on the path too.
    monkeypatch.setattr(tantivy, "DEEP_OFFSET", 100)
    first = client.get("/search", {"q": "lattice", "sort": "oldest"}).content.decode()
    assert "Page 1 of 203" in first and "page=203" in first and "Last (203)" in first
    last = client.get("/search", {"q": "lattice", "sort": "oldest", "page": 203}).content.decode()
    assert "Page 203 of 203" in last and "Lattice gauge study 2029" in last
    assert "Lattice gauge study 2019" not in last and 'rel="next"' not in last
    past = client.get("/search", {"q": "lattice", "sort": "oldest", "page": 250}).content.decode()
    assert "Lattice gauge study" not in past and 'rel="prev"' in past


@pytest.mark.postgres
def test_postgresql_looks_a_word_up_in_its_index_never_by_reading_every_document(paper_factory):
    """A first match of a word no paper holds, taken from a sequential scan, reads every
    document (0.5-1 s at 1M papers): `words_held` plans its lookups with sequential scans off,
    whatever the table's size or statistics."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from papers.search.postgres_documents import search_index_pending

    paper_factory(title="Quantum percolation", abstract="Thresholds on lattices.")
    search_index_pending()
    with connection.cursor() as cursor:
        # With statistics of a small table the planner's choice is a sequential scan.
        cursor.execute("ANALYZE papers_papersearchdocument")
    backend = database.PostgresPaperBackend(PAPERS)
    with CaptureQueriesContext(connection) as queries:
        assert backend.words_held(["percolation", "zorblat"]) == [True, False]
    lookup = next(q["sql"] for q in queries.captured_queries if "most_common_elems" in q["sql"])
    with transaction.atomic(), connection.cursor() as cursor:
        settings_sql = next(
            q["sql"] for q in queries.captured_queries if "enable_seqscan" in q["sql"]
        )
        cursor.execute(settings_sql)
        cursor.execute("EXPLAIN " + lookup)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Bitmap Index Scan on paper_search_document_gin" in plan
    assert "Seq Scan on papers_papersearchdocument" not in plan
