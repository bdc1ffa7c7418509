"""The search index stage (papers.search.postgres_documents): documents follow the papers they are
built from."""

from __future__ import annotations

import threading

import pytest

from papers.harvest import oai
from papers.harvest.runs import harvest_page_ingest, harvest_run_create
from papers.ingest import importing
from papers.ingest.importing import snapshot_import
from papers.ingest.records import PaperRecord
from papers.ingest.upsert import papers_upsert
from papers.models import Paper, PaperSearchDocument
from papers.search import paper_search
from papers.search import postgres_documents as indexing
from papers.search.postgres_documents import search_index_papers, search_index_pending
from papers.tasks import index_search_pending
from tests.papers.conftest import ARXIV_PAGE_3, oai_bytes


def _record(arxiv_id: str, title: str, abstract: str = "") -> PaperRecord:
    return PaperRecord(arxiv_id=arxiv_id, title=title, abstract=abstract, categories=["cs.LG"])


@pytest.mark.postgres
def test_bulk_writes_are_searchable_once_indexed_and_changes_reindex(db):
    papers_upsert(
        [
            _record("2401.00001", "Tropical geometry of matroids"),
            _record("2401.00002", "Sheaves on curves", "Tropical methods appear."),
        ]
    )
    assert paper_search("tropical").total == 0  # written, not yet indexed
    assert search_index_pending() == 2
    assert [p.arxiv_id for p in paper_search("tropical").items] == ["2401.00001", "2401.00002"]
    assert search_index_pending() == 0  # idempotent

    _, changed = papers_upsert([_record("2401.00002", "Sheaves on surfaces")])
    assert search_index_papers(changed) == 1
    assert [p.arxiv_id for p in paper_search("tropical").items] == ["2401.00001"]
    assert paper_search("surfaces").total == 1
    assert search_index_papers(changed) == 0  # already current


@pytest.mark.postgres
def test_a_paper_saved_by_hand_is_reindexed_at_once(paper_factory, django_assert_num_queries):
    paper = paper_factory(title="Graph colouring")
    assert paper_search("colouring").total == 1
    paper.title = "Graph labelling"  # the digest does not change: only the save signal tells
    paper.save()
    assert paper_search("colouring").total == 0
    assert paper_search("labelling").total == 1
    paper.cited_by_count = 3
    with django_assert_num_queries(1):  # the UPDATE; nothing the document reads has changed
        paper.save(update_fields=["cited_by_count"])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_import_indexes_each_committed_batch_beside_the_load(sample_path, monkeypatch):
    """Outside a transaction the import hands each committed batch to the background indexer,
    whose own connection builds the documents while the next batch loads."""
    indexed_in = []
    real = importing.BackgroundIndexer.submit

    def spy(indexer, paper_ids):
        indexed_in.append(len(paper_ids))
        return real(indexer, paper_ids)

    monkeypatch.setattr(importing.BackgroundIndexer, "submit", spy)
    monkeypatch.setattr(indexing, "FLUSH_AFTER", 100)
    counts, _ = snapshot_import(sample_path, batch_size=500)
    assert indexed_in == [500] * 6 + [counts.created - 3000]
    assert PaperSearchDocument.objects.count() == Paper.objects.count() == counts.created > 2000
    assert search_index_pending() == 0  # nothing left for the sweep
    title_word = max(Paper.objects.order_by("id").first().title.split(), key=len)
    assert paper_search(title_word).total >= 1

    indexed_in.clear()
    assert snapshot_import(sample_path)[0].unchanged == counts.created
    assert indexed_in == []  # a rerun changes nothing, so indexes nothing


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_sweep_spreads_ranges_over_connections(sample_path, monkeypatch):
    monkeypatch.setattr(indexing, "RANGE_SPAN", 300)
    counts, _ = snapshot_import(sample_path, build_search_index=False)
    assert PaperSearchDocument.objects.count() == 0
    threads = set()
    real = indexing._index_range

    def spy(first_id, last_id):
        threads.add(threading.get_ident())
        return real(first_id, last_id)

    monkeypatch.setattr(indexing, "_index_range", spy)
    assert search_index_pending(workers=2) == counts.created
    assert threading.get_ident() not in threads and len(threads) == 2
    assert PaperSearchDocument.objects.count() == counts.created


@pytest.mark.postgres
def test_harvested_page_is_indexed_when_its_transaction_commits(
    oai_url, db, django_capture_on_commit_callbacks
):
    run = harvest_run_create(set_spec="physics", metadata_prefix="arXiv")
    page = oai.parse_list_records(oai_bytes(ARXIV_PAGE_3), metadata_prefix="arXiv")
    with django_capture_on_commit_callbacks(execute=True):
        _, changed = harvest_page_ingest(run, page)
    assert changed
    assert PaperSearchDocument.objects.filter(paper_id__in=changed).count() == len(changed)
    paper = Paper.objects.get(pk=changed[0])
    assert paper.pk in [p.pk for p in paper_search(paper.title, limit=50).items]


@pytest.mark.postgres
def test_the_periodic_sweep_catches_up(db):
    papers_upsert([_record("2401.00003", "Knot invariants")])
    assert index_search_pending.delay().get() == 1
    assert paper_search("knot").total == 1


@pytest.mark.sqlite
def test_sqlite_search_needs_no_index_stage(db):
    papers_upsert([_record("2401.00004", "Braid groups")])
    assert paper_search("braid").total == 1  # FTS5 triggers keep it current
    assert search_index_pending() == 0
    assert PaperSearchDocument.objects.count() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_failing_background_indexer_never_fails_the_import(sample_path, monkeypatch, caplog):
    def broken(paper_ids, **kwargs):
        raise RuntimeError("connection lost")

    monkeypatch.setattr(indexing, "search_index_papers", broken)
    counts, _ = snapshot_import(sample_path, batch_size=500)
    assert "background search indexing stopped" in caplog.text
    # The sweep after the load built every document the indexer did not.
    assert PaperSearchDocument.objects.count() == counts.created > 2000
