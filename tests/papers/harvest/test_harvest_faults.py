"""The fault sweep, kept: harvests through the operator's command against an OAI-PMH server that
misbehaves in each way arXiv's (or a proxy in front of it) has been seen to.

A fault that passes is ridden out: the page is asked for again and the run succeeds. A fault
that lasts past the retry budget fails the run with the reason and the run to resume, keeps
every page before it, and a resume once the server is well again completes the list with
nothing skipped and nothing asked for twice. Bounded to a few seconds per case.
"""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache
from django.core.management.base import CommandError

from papers.harvest.client import ArxivOAIClient
from papers.harvest.runs import harvest_window
from papers.models import HarvestRun, Paper
from tests.papers.conftest import harvest_command, point_harvester_at
from tests.papers.harvest.faulty_oai import FaultyOAI

RETRIES = 2  # ARXIV_OAI_MAX_RETRIES: each page is asked for at most three times
WHY = {
    "no-token": "no resumptionToken",
    "empty": "no resumptionToken",
    "short": "87 of the 100 records it announced",
    "truncated": "not well-formed",
    "hang": "ReadTimeout",
    "5xx": "HTTP 500",
}


@pytest.fixture
def faulty(settings):
    with FaultyOAI(pages=4, per_page=25, hang_seconds=2.5, retry_after=1) as server:
        point_harvester_at(
            settings, server.url, interval=0, timeout=2.0, retries=RETRIES, retry_after_cap=5
        )
        yield server
        cache.clear()


@pytest.mark.parametrize("fault", sorted(WHY))
def test_a_lasting_fault_fails_the_run_with_the_reason_and_a_resume_completes_it(faulty, db, fault):
    faulty.inject(4, *[fault] * (RETRIES + 1))
    with pytest.raises(CommandError) as info:
        harvest_command()
    run = HarvestRun.objects.get()
    message = str(info.value)
    assert message.startswith(f"harvest failed (run {run.pk}: resume with --resume {run.pk}): ")
    assert WHY[fault] in message, message
    assert "Traceback" not in message
    assert faulty.requests_for(4) == [fault] * (RETRIES + 1)
    assert run.status == HarvestRun.Status.FAILED and WHY[fault] in run.errors[-1]["message"]
    # Nothing of the bad answers was taken: the checkpoint is still the third page's.
    assert (run.pages, run.resumption_token, Paper.objects.count()) == (3, "fault|4", 75)

    out, _ = harvest_command("--resume", str(run.pk))
    run.refresh_from_db()
    assert f"harvest run {run.pk} succeeded" in out
    assert (run.status, run.pages, run.created) == (HarvestRun.Status.SUCCEEDED, 4, 100)
    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == sorted(faulty.arxiv_ids())
    assert faulty.served_pages() == [1, 2, 3, 4]


@pytest.mark.parametrize("fault", [*sorted(WHY), "503"])
def test_a_passing_fault_is_ridden_out(faulty, db, fault):
    faulty.inject(2, fault)
    out, _ = harvest_command()
    run = HarvestRun.objects.get()
    assert f"harvest run {run.pk} succeeded" in out
    assert (run.pages, run.created) == (4, 100)
    assert faulty.requests_for(2) == [fault, "ok"]
    assert faulty.served_pages() == [1, 2, 3, 4]


def test_503_with_retry_after_is_waited_out_as_asked(faulty, db):
    faulty.inject(2, "503")
    with ArxivOAIClient() as client:
        started = time.monotonic()
        run = harvest_window(metadata_prefix="arXiv", client=client)
        elapsed = time.monotonic() - started
    assert run.status == HarvestRun.Status.SUCCEEDED
    assert [(w.requested, w.reason) for w in client.waits] == [(1, "HTTP 503 Retry-After 1s")]
    assert client.waits[0].slept >= 0.95 and elapsed >= 0.95
