"""The engine's index is fed after commit by every write that changes what it holds, and can
be rebuilt from the database; here with tantivy, the engine that has an index of its own."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from institutions.models import Institution
from institutions.name_search import institutions_search
from institutions.services import institutions_update_stats
from papers.ingest.importing import snapshot_import
from papers.models import Paper
from papers.search import PAPERS, paper_search, paper_search_backend
from researchers.curation.decisions import researchers_merge
from researchers.name_search import researchers_search
from researchers.page_figures import researchers_update_stats
from wovepaper.lib.search import SearchQuery, reset_backends
from wovepaper.lib.search.engine_feed import engine_index_enqueue

SNAPSHOT = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv-snapshot" / "first200.jsonl"


@pytest.fixture
def tantivy_engine(settings, tmp_path, db):
    settings.SEARCH_ENGINE = "tantivy"
    settings.SEARCH_INDEX_DIR = tmp_path / "search-index"
    reset_backends()
    yield
    reset_backends()


def _engine_ids(text: str) -> list[int]:
    return paper_search_backend().search(SearchQuery(text=text, limit=50)).items


def test_nothing_is_sent_without_an_engine(
    settings, paper_factory, django_capture_on_commit_callbacks
):
    settings.SEARCH_ENGINE = "database"
    with django_capture_on_commit_callbacks() as callbacks:
        engine_index_enqueue(PAPERS, [1, 2])
    assert callbacks == []


def test_a_saved_paper_is_found_after_commit_and_not_before(
    tantivy_engine, paper_factory, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        paper = paper_factory(title="Tropical curves")
    assert _engine_ids("tropical") == []  # not committed yet: nothing sent
    for callback in callbacks:
        callback()
    assert _engine_ids("tropical") == [paper.pk]
    with django_capture_on_commit_callbacks(execute=True):
        paper.title = "Amoebas"
        paper.save(update_fields=["title"])
    assert _engine_ids("tropical") == [] and _engine_ids("amoebas") == [paper.pk]
    with django_capture_on_commit_callbacks(execute=True):
        paper.is_deleted = True
        paper.save(update_fields=["is_deleted"])
    assert _engine_ids("amoebas") == []


def test_an_imported_snapshot_is_searchable_when_the_import_commits(
    tantivy_engine, django_capture_on_commit_callbacks
):
    first = json.loads(SNAPSHOT.read_text().splitlines()[0])
    word = max(first["title"].split(), key=len).strip(".,:;()")
    with django_capture_on_commit_callbacks(execute=True):
        snapshot_import(SNAPSHOT, batch_size=64)
    assert paper_search_backend().document_count() == Paper.objects.count() == 200
    found = paper_search(word)
    assert first["id"] in [p.arxiv_id for p in found.items]


def test_stats_and_merges_keep_the_name_indexes_current(
    tantivy_engine, researcher_factory, django_capture_on_commit_callbacks
):
    survivor = researcher_factory("Ingrid Daubechies")
    folded = researcher_factory("I. Daubechies")
    cern = Institution.objects.create(name="CERN")
    with django_capture_on_commit_callbacks(execute=True):
        researchers_update_stats([survivor.pk, folded.pk])
        institutions_update_stats([cern.pk])
    assert {r.pk for r in researchers_search("daubech").items} == {survivor.pk, folded.pk}
    assert [i.pk for i in institutions_search("cern").items] == [cern.pk]
    with django_capture_on_commit_callbacks(execute=True):
        researchers_merge(survivor_id=survivor.pk, folded_ids=[folded.pk], actor=None)
    assert [r.pk for r in researchers_search("daubech").items] == [survivor.pk]


def test_rebuild_command_builds_every_collection_with_progress(
    tantivy_engine, paper_factory, capsys
):
    papers = [paper_factory(title=f"Rebuilt paper {n}") for n in range(3)]
    Institution.objects.create(name="Institut Henri Poincaré")
    assert _engine_ids("rebuilt") == []  # written inside the test's transaction: never sent
    out = StringIO()
    call_command("rebuild_search_index", stdout=out)
    assert sorted(_engine_ids("rebuilt")) == sorted(p.pk for p in papers)
    assert "papers: 3 documents in the tantivy index" in out.getvalue()
    assert "institutions: 1 documents" in out.getvalue()
    assert "3/3" in capsys.readouterr().err  # tqdm's progress bar
    assert [i.name for i in institutions_search("poincare").items] == ["Institut Henri Poincaré"]


def test_a_paper_without_a_date_is_indexed_and_sorts_first_among_the_oldest(
    tantivy_engine, paper_factory
):
    # The demo's recorded papers have no submission date: tantivy's dates begin in 1677.
    dated = paper_factory(title="Undated and dated lattices")
    undated = paper_factory(title="Undated lattices of the demo")
    Paper.objects.filter(pk=undated.pk).update(published=None)
    call_command("rebuild_search_index", stdout=StringIO())
    oldest = paper_search_backend().search(SearchQuery(text="undated", sort="oldest", limit=5))
    assert oldest.items == [undated.pk, dated.pk]


def test_rebuild_command_says_the_database_needs_none(settings, db):
    settings.SEARCH_ENGINE = "database"
    out = StringIO()
    call_command("rebuild_search_index", stdout=out)
    assert "nothing to rebuild" in out.getvalue()


def test_the_periodic_catch_up_indexes_what_lost_messages_left_out(
    tantivy_engine, settings, paper_factory, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.utils import timezone

    from wovepaper.lib.search.engine_feed import caught_up_at, engine_catch_up_task

    with django_capture_on_commit_callbacks(execute=False):  # the messages are lost
        fresh = paper_factory(title="Tropical curves")
        stale = paper_factory(title="Tropical varieties")
        gone = paper_factory(title="Tropical lines")
    Paper.objects.filter(pk=stale.pk).update(modified_at=timezone.now() - timedelta(hours=50))
    assert _engine_ids("tropical") == []

    # No mark yet: the first round looks back SEARCH_CATCH_UP_FIRST_HOURS (24).
    assert engine_catch_up_task()["papers"] == 2
    assert sorted(_engine_ids("tropical")) == sorted([fresh.pk, gone.pk])
    assert timezone.now() - caught_up_at(PAPERS) < timedelta(minutes=1)

    # A deletion whose message is lost too: the next round drops the document.
    with django_capture_on_commit_callbacks(execute=False):
        Paper.objects.filter(pk=gone.pk).update(is_deleted=True, modified_at=timezone.now())
    engine_catch_up_task()
    assert _engine_ids("tropical") == [fresh.pk]

    # The round goes back from the mark, not from a fixed window: with the mark older than
    # the stale paper's change, it is found.
    mark = caught_up_at(PAPERS)
    from wovepaper.lib.search.engine_feed import record_caught_up

    record_caught_up(PAPERS, mark - timedelta(hours=60))
    engine_catch_up_task()
    assert sorted(_engine_ids("tropical")) == sorted([fresh.pk, stale.pk])


def test_a_rebuild_marks_where_the_catch_up_goes_on_from(tantivy_engine, paper_factory):
    from datetime import timedelta

    from django.utils import timezone

    from wovepaper.lib.search.engine_feed import caught_up_at

    paper_factory(title="Tropical curves")
    assert caught_up_at(PAPERS) is None
    call_command("rebuild_search_index", "papers", verbosity=0)
    assert timezone.now() - caught_up_at(PAPERS) < timedelta(minutes=1)


def test_the_reconcile_round_and_catch_up_find_what_no_catch_up_round_can(
    tantivy_engine, settings, paper_factory, django_capture_on_commit_callbacks
):
    """A record whose message was lost and that has not changed since the last catch-up round
    began is found only by comparing ids: the periodic round does it in steps, catch_up whole."""
    from datetime import timedelta

    from django.utils import timezone

    from wovepaper.lib.search.engine_feed import (
        engine_reconcile,
        reconcile_engine_task,
        record_caught_up,
    )

    settings.ENGINE_RECONCILE_RANGE = 2
    settings.ENGINE_RECONCILE_ROWS = 2
    with django_capture_on_commit_callbacks(execute=False):  # the messages are lost
        lost = [paper_factory(title=f"Tropical geometry {n}") for n in range(3)]
    held = paper_factory(title="Tropical held")
    paper_search_backend().index([held.pk])
    record_caught_up(PAPERS, timezone.now() + timedelta(minutes=30))  # a round began after
    assert _engine_ids("tropical") == [held.pk]

    first = reconcile_engine_task()["papers"]  # the walk's first two ids
    assert first == "2 records examined, 2 without a document in the index; 2 documents written"
    assert sorted(_engine_ids("tropical")) == sorted([held.pk, lost[0].pk, lost[1].pk])
    second = reconcile_engine_task()["papers"]  # on from where it stopped
    assert second.startswith("2 records examined, 1 without a document")
    assert sorted(_engine_ids("tropical")) == sorted([held.pk, *(p.pk for p in lost)])
    # Nothing left: a whole walk finds every id held.
    whole = engine_reconcile(PAPERS)
    assert (whole.examined, whole.missing, whole.repaired) == (4, 0, 0)

    with django_capture_on_commit_callbacks(execute=False):
        late = paper_factory(title="Tropical late")
    record_caught_up(PAPERS, timezone.now() + timedelta(minutes=30))
    out = StringIO()
    call_command("catch_up", only=["search"], stdout=out)
    assert (
        "index of papers: 5 records examined, 1 without a document in the index" in out.getvalue()
    )
    assert late.pk in _engine_ids("tropical")
