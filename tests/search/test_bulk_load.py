"""A snapshot import with an engine configured feeds the engine's index itself, through one
writer held for the import, so every paper is searchable when it ends (no queue to drain);
PostgreSQL's own search documents, which nothing reads with an engine, are not built."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from papers.ingest import importing
from papers.ingest.importing import snapshot_import
from papers.ingest.snapshot import iter_snapshot_lines, parse_snapshot_line
from papers.models import Paper, PaperSearchDocument, RejectedRecord
from papers.search import PAPERS, paper_search, paper_search_backend
from papers.search.documents import paper_document_of_record, paper_documents
from papers.search.postgres_documents import search_index_papers, search_index_pending
from wovepaper.lib.search import SearchQuery, reset_backends
from wovepaper.lib.search.tantivy import TantivyBackend


@pytest.fixture
def tantivy_engine(settings, tmp_path):
    settings.SEARCH_ENGINE = "tantivy"
    settings.SEARCH_INDEX_DIR = tmp_path / "search-index"
    reset_backends()
    yield
    reset_backends()


def _found(text: str) -> list[int]:
    return paper_search_backend("keyword").search(SearchQuery(text=text, limit=50)).items


def _lines(fixtures_dir) -> list[str]:
    return (fixtures_dir / "arxiv-snapshot" / "first200.jsonl").read_text().splitlines()


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.django_db
def test_a_new_papers_document_from_its_record_is_the_one_read_from_the_database(sample_path):
    """What the import adds without reading back must be what the indexer would read."""
    snapshot_import(sample_path, build_search_index=False)
    records = {}
    for line in iter_snapshot_lines(sample_path):
        record = parse_snapshot_line(line.text)
        records[record.arxiv_id] = record
    ids = dict(Paper.objects.values_list("pk", "arxiv_id"))
    stored = list(paper_documents(list(ids)))
    assert len(stored) == len(records) > 2000
    for document in stored:
        assert paper_document_of_record(document["id"], records[ids[document["id"]]]) == document


@pytest.mark.django_db(transaction=True)
def test_an_import_is_searchable_in_the_engine_when_it_returns(
    tantivy_engine, fixtures_dir, tmp_path, monkeypatch
):
    lines = _lines(fixtures_dir)
    queued = []
    monkeypatch.setattr(importing, "engine_index_enqueue", lambda c, ids: queued.append(ids))
    path = _write(tmp_path / "s.jsonl", [*lines[:100], "{not json", *lines[100:]])
    counts, changed = snapshot_import(path, batch_size=64)
    assert (counts.created, counts.rejected) == (200, 1)
    assert RejectedRecord.objects.get().record_key == "line 101"
    assert queued == []  # fed directly, not through the indexer's queue
    assert paper_search_backend().document_count() == Paper.objects.count() == 200
    first = json.loads(lines[0])
    word = max(first["title"].split(), key=len).strip(".,:;()")
    assert first["id"] in [p.arxiv_id for p in paper_search(word, mode="keyword").items]
    # Nothing reads PostgreSQL's documents with an engine: none were built, none will be.
    assert PaperSearchDocument.objects.count() == 0
    assert search_index_pending() == 0 and search_index_papers(changed) == 0

    # A rerun changes nothing and writes nothing to the index.
    counts, changed = snapshot_import(path)
    assert (counts.unchanged, changed) == (200, [])
    assert paper_search_backend().document_count() == 200

    # A changed line replaces its paper's document, read back from the database.
    revised = json.loads(lines[1])
    revised["title"] = "Zygohistomorphic prepromorphisms of graph decompositions"
    counts, changed = snapshot_import(_write(tmp_path / "r.jsonl", [json.dumps(revised)]))
    paper = Paper.objects.get(arxiv_id=revised["id"])
    assert counts.updated == 1 and changed == [paper.pk]
    assert _found("zygohistomorphic") == [paper.pk]
    assert _found("sparsity-certifying") == []
    assert paper_search_backend().document_count() == 200


@pytest.mark.django_db(transaction=True)
def test_a_paper_repeated_in_a_first_load_has_one_document(tantivy_engine, fixtures_dir, tmp_path):
    """Created in one batch, changed by a later line of the same import: replaced, not
    added twice."""
    lines = _lines(fixtures_dir)
    revised = json.loads(lines[1])
    revised["title"] = "Zygohistomorphic prepromorphisms"
    path = _write(tmp_path / "s.jsonl", [*lines[:4], json.dumps(revised)])
    counts, _ = snapshot_import(path, batch_size=2)
    assert (counts.created, counts.updated) == (4, 1)
    paper = Paper.objects.get(arxiv_id=revised["id"])
    assert paper_search_backend().document_count() == 4
    assert _found("zygohistomorphic") == [paper.pk]
    assert _found('"sparsity-certifying graph decompositions"') == []


@pytest.mark.django_db(transaction=True)
def test_an_index_held_by_another_writer_gets_the_ids_through_the_queue(
    tantivy_engine, fixtures_dir, tmp_path, monkeypatch, settings
):
    """The search indexer (another process) holds the writer: the import goes on and sends
    its ids to the indexer's queue, as the harvest does."""
    queued: list[list[int]] = []
    monkeypatch.setattr(importing, "engine_index_enqueue", lambda c, ids: queued.append(ids))
    other = TantivyBackend(PAPERS, directory=settings.SEARCH_INDEX_DIR)
    writer = other.index_.writer(heap_size=15_000_000, num_threads=1)
    try:
        counts, changed = snapshot_import(
            _write(tmp_path / "s.jsonl", _lines(fixtures_dir)[:10]), batch_size=4
        )
    finally:
        writer.rollback()
        del writer
    assert counts.created == 10
    assert [i for ids in queued for i in ids] == changed
    assert paper_search_backend().document_count() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_database_engine_still_builds_postgresqls_documents(fixtures_dir, tmp_path):
    assert connection.vendor == "postgresql"
    counts, _ = snapshot_import(_write(tmp_path / "s.jsonl", _lines(fixtures_dir)), batch_size=64)
    assert PaperSearchDocument.objects.count() == counts.created == 200
