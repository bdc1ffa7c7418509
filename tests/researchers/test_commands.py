"""match_researchers, the Celery tasks and the demo step."""

from __future__ import annotations

import socket
import time
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from celery import signature
from django.core.management import CommandError, call_command
from django.utils import timezone

from papers.models import Authorship
from researchers.models import MatchRun, PaperMatchState, Researcher, ResearcherExternalId
from researchers.source_figures import researchers_with_stale_figures

BYLINES = {
    "2302.13971": [
        "Hugo Touvron",
        "Thibaut Lavril",
        "Gautier Izacard",
        "Xavier Martinet",
        "Marie-Anne Lachaux",
        "Timothée Lacroix",
        "Baptiste Rozière",
        "Naman Goyal",
        "Eric Hambro",
        "Faisal Azhar",
        "Aurelien Rodriguez",
        "Armand Joulin",
        "Edouard Grave",
        "Guillaume Lample",
    ],
    "2205.00965": ["Tosin P. Adewumi", "Foteini Liwicki", "Marcus Liwicki"],
    "2108.04680": [
        "Jonathan C. Roberts",
        "Joseph W. Mearman",
        "Peter W. S. Butcher",
        "Hayder M. Al-Maneea",
        "Panagiotis D. Ritsos",
    ],
    "2401.99999": ["Nobody Known"],
}


@pytest.fixture
def papers(paper_factory):
    return {
        arxiv_id: paper_factory(
            arxiv_id=arxiv_id, authors=authors, published=datetime(2024, 3, 1 + n, tzinfo=UTC)
        )
        for n, (arxiv_id, authors) in enumerate(BYLINES.items())
    }


def run_command(**options) -> str:
    out = StringIO()
    call_command("match_researchers", no_progress=True, stdout=out, stderr=StringIO(), **options)
    return out.getvalue()


@pytest.mark.django_db
def test_command_matches_newest_first_with_a_summary(sources, papers, clean_cache):
    output = run_command(limit=2, probe_timeout=1)
    assert "Matched 1 papers, 1 unknown to both sources, 0 failed" in output
    tried = set(PaperMatchState.objects.values_list("paper__arxiv_id", flat=True))
    assert tried == {"2401.99999", "2108.04680"}  # the two newest
    run = MatchRun.objects.get()
    assert (run.trigger, run.status, run.papers) == ("command", MatchRun.OK, 2)
    output = run_command(since="2024-03-02", probe_timeout=1)
    assert "Matched 1 papers" in output
    assert not PaperMatchState.objects.filter(paper__arxiv_id="2302.13971").exists()
    assert "No papers wait" in run_command(since="2024-03-02", probe_timeout=1)


@pytest.mark.django_db
def test_command_says_clearly_when_services_are_unreachable(api_settings, papers, clean_cache):
    api_settings.SEMANTIC_SCHOLAR_API_URL = "http://127.0.0.1:9/s2"
    api_settings.OPENALEX_API_URL = "http://127.0.0.1:9/openalex"
    started = time.monotonic()
    output = run_command(probe_timeout=2)
    assert time.monotonic() - started < 10
    assert "Semantic Scholar (http://127.0.0.1:9/s2) is unreachable" in output
    assert "OpenAlex (http://127.0.0.1:9/openalex) is unreachable" in output
    assert "nothing was changed; 4 papers wait for matching" in output
    assert not PaperMatchState.objects.exists()
    assert not Authorship.objects.filter(researcher__isnull=False).exists()


@pytest.fixture
def silent_port():
    """A port that accepts connections and never answers: the slow failure, not the quick one."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield listener.getsockname()[1]
    listener.close()


@pytest.mark.django_db
def test_probe_does_not_hang_on_a_silent_service(api_settings, papers, silent_port, clean_cache):
    api_settings.SEMANTIC_SCHOLAR_API_URL = f"http://127.0.0.1:{silent_port}/s2"
    started = time.monotonic()
    output = run_command(probe_timeout=0.5)
    assert time.monotonic() - started < 5
    assert "no answer within 0.5 s" in output
    assert not PaperMatchState.objects.exists()


@pytest.mark.django_db
def test_command_rejects_bad_options(papers):
    with pytest.raises(CommandError, match="YYYY-MM-DD"):
        run_command(since="last week")
    with pytest.raises(CommandError, match="positive"):
        run_command(limit=0)


@pytest.mark.django_db
def test_match_papers_task_runs_by_name(sources, papers, clean_cache):
    result = (
        signature(
            "researchers.match_papers", args=[[papers["2205.00965"].pk, papers["2401.99999"].pk]]
        )
        .delay()
        .get()
    )
    assert (result["matched"], result["unknown"], result["failed"]) == (1, 1, 0)
    assert Authorship.objects.get(paper=papers["2205.00965"], position=3).researcher


@pytest.mark.django_db
def test_next_batch_task_and_failure_in_task_log(sources, papers, settings, caplog, clean_cache):
    settings.OPENALEX_API_URL = "http://127.0.0.1:9/openalex"
    result = signature("researchers.match_next_batch", kwargs={"limit": 10}).delay().get()
    assert result["failed"] == 4 and result["status"] == MatchRun.UNREACHABLE
    assert "OpenAlex: unreachable" in caplog.text
    assert set(PaperMatchState.objects.values_list("openalex_status", flat=True)) == {"error"}


@pytest.mark.django_db
def test_refresh_figures_oldest_first(sources, clean_cache):
    now = timezone.now()
    old = Researcher.objects.create(
        display_name="I. Sommerville", figures_updated_at=now - timedelta(days=400)
    )
    older = Researcher.objects.create(
        display_name="E. Dijkstra", figures_updated_at=now - timedelta(days=900)
    )
    fresh = Researcher.objects.create(display_name="D. Parnas", figures_updated_at=now)
    never = Researcher.objects.create(display_name="Nobody Yet")
    for researcher, value in ((old, "1711844"), (older, "3234559"), (fresh, "1726629")):
        ResearcherExternalId.objects.create(researcher=researcher, source="s2", value=value)
    assert researchers_with_stale_figures(limit=10) == [never.pk, older.pk, old.pk]
    assert researchers_with_stale_figures(limit=2) == [never.pk, older.pk]
    result = signature("researchers.refresh_figures", kwargs={"limit": 10}).delay().get()
    assert result == {"researchers": 3, "updated": 2}
    old.refresh_from_db()
    assert old.h_index == 57 and old.figures_source == "s2"
    assert old.figures_updated_at > now - timedelta(minutes=1)
    assert researchers_with_stale_figures(limit=10) == []
