"""Last-Modified moves when the bulk writers change what the API serves, so a client asking
with If-Modified-Since alone is never told 304 over stale figures."""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils import timezone

from institutions.models import Institution
from institutions.services import institutions_update_stats
from papers.models import Paper
from papers.services import PaperSourceRecord, papers_store_source_records
from researchers.models import Researcher
from researchers.page_figures import researchers_update_stats

LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)


def _asked_since_long_ago(api, url: str):
    first = api.get(url)
    assert first.status_code == 200
    assert api.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 304
    return first["Last-Modified"]


def test_citation_counts_stored_for_a_paper_move_its_last_modified(api, world):
    paper = world["old"]
    Paper.objects.filter(pk=paper.pk).update(modified_at=LONG_AGO)
    Researcher.objects.update(modified_at=LONG_AGO)
    url = f"/api/v1/papers/{paper.arxiv_id}/"
    since = _asked_since_long_ago(api, url)
    papers_store_source_records(
        records=[
            PaperSourceRecord(
                paper_id=paper.pk,
                semantic_scholar_id=None,
                openalex_id=None,
                cited_by_count=42,
                cited_by_source="s2",
                cited_by_updated_at=timezone.now(),
            )
        ]
    )
    fresh = api.get(url, HTTP_IF_MODIFIED_SINCE=since)
    assert fresh.status_code == 200 and fresh.json()["cited_by_count"] == 42


def test_recomputed_researcher_statistics_move_their_last_modified(api, world):
    ada = world["ada"]
    Researcher.objects.filter(pk=ada.pk).update(modified_at=LONG_AGO, paper_count=0)
    Paper.objects.update(modified_at=LONG_AGO)
    url = f"/api/v1/researchers/{ada.pk}/"
    since = _asked_since_long_ago(api, url)
    researchers_update_stats([ada.pk])
    fresh = api.get(url, HTTP_IF_MODIFIED_SINCE=since)
    assert fresh.status_code == 200 and fresh.json()["paper_count"] == 5


def test_recounted_institutions_move_their_last_modified(api, world):
    cambridge = world["cambridge"]
    Institution.objects.filter(pk=cambridge.pk).update(modified_at=LONG_AGO, paper_count=0)
    url = f"/api/v1/institutions/{cambridge.pk}/"
    since = _asked_since_long_ago(api, url)
    institutions_update_stats([cambridge.pk])
    fresh = api.get(url, HTTP_IF_MODIFIED_SINCE=since)
    assert fresh.status_code == 200 and fresh.json()["paper_count"] == 2
