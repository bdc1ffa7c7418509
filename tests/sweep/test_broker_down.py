"""The broker stopped and frozen under requests (#30 item 1), on a Redis this test starts on a
port of its own, which is the broker and the cache at once, as deploy/wovepaper.env.example
sets them: every public page, the API and the chat answer within 2 s, and the work they would
have queued is left to the sweeps with one line in the log."""

from __future__ import annotations

import logging
import os
import signal
import time

import pytest
from django.contrib.auth import get_user_model
from kombu import pools as kombu_pools

from papers.models import PaperAnalysis
from researchers.models import Researcher
from tests.sweep import production_caches
from wovepaper.celery import app as celery_app
from wovepaper.lib.queueing import broker_forget_failure, send_now

pytestmark = pytest.mark.django_db

BUDGET = 2.0
NOT_QUEUED = "could not queue"


@pytest.fixture
def broker_on_own_redis(own_redis, settings, paper_factory):
    process = own_redis.start()
    url = own_redis.url
    settings.CACHES = production_caches(url, retry_after=5)
    # Read before the settings change: Celery's configuration reads through to Django's.
    keys = ("broker_url", "task_always_eager", "task_default_queue")
    saved = {key: celery_app.conf[key] for key in keys}
    settings.CELERY_BROKER_URL = url
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.LLM_MODEL = ""
    celery_app.conf.update(broker_url=url, task_always_eager=False, task_default_queue="nobody")
    kombu_pools.reset()
    broker_forget_failure()
    try:
        yield process
    finally:
        celery_app.conf.update(saved)
        kombu_pools.reset()
        broker_forget_failure()


@pytest.fixture
def site(paper_factory, client):
    paper = paper_factory(title="A paper read while the broker is away")
    researcher = Researcher.objects.create(display_name="Ada Lovelace")
    reader = get_user_model().objects.create_user("reader", "reader@example.org", "x-long-pw-31")
    client.force_login(reader)
    return paper, researcher


def _timed_answers(client, paper, researcher) -> dict[str, tuple[int, float]]:
    client.raise_request_exception = False
    answers = {}
    for path in (
        "/",
        paper.get_absolute_url(),
        researcher.get_absolute_url(),
        "/search?q=paper",
        "/api/v1/papers/",
        f"/api/v1/papers/{paper.arxiv_id}/",
    ):
        started = time.monotonic()
        status = client.get(path).status_code
        answers[path] = (status, time.monotonic() - started)
    started = time.monotonic()
    status = client.post(
        "/chat/ask",
        {"question": "what is new here?", "scope": f"paper:{paper.arxiv_id}"},
        HTTP_X_REQUESTED_WITH="fetch",
    ).status_code
    answers["POST /chat/ask"] = (status, time.monotonic() - started)
    return answers


def _check(answers: dict[str, tuple[int, float]], *, timed: bool = True) -> None:
    assert {path: status for path, (status, _) in answers.items()} == dict.fromkeys(answers, 200)
    if not timed:  # the first requests of a process load its templates and engines
        return
    slow = {path: seconds for path, (_, seconds) in answers.items() if seconds >= BUDGET}
    assert slow == {}


def _fresh_paper(paper) -> None:
    """The page asks for an analysis again (no current one, the cooldown forgotten)."""
    PaperAnalysis.objects.filter(paper=paper).delete()


@pytest.mark.parametrize("outage", ["stopped", "frozen"])
def test_pages_api_and_chat_answer_within_2_s_with_the_broker_away(
    outage, client, broker_on_own_redis, site, caplog
):
    paper, researcher = site
    process = broker_on_own_redis
    caplog.set_level(logging.WARNING, logger="wovepaper.lib.queueing")
    _check(_timed_answers(client, paper, researcher), timed=False)  # up: analysis queued
    assert [r for r in caplog.records if NOT_QUEUED in r.getMessage()] == []

    if outage == "stopped":
        process.kill()
        process.wait(timeout=10)
    else:
        os.kill(process.pid, signal.SIGSTOP)  # accepts connections, answers nothing
    try:
        for _ in range(2):
            _fresh_paper(paper)
            _check(_timed_answers(client, paper, researcher))
    finally:
        if outage == "frozen":
            os.kill(process.pid, signal.SIGCONT)
    # One line for the outage, not one per request; no traceback.
    lines = [r for r in caplog.records if NOT_QUEUED in r.getMessage()]
    assert len(lines) <= 1 and not [r for r in lines if r.exc_info], lines


def test_a_publish_to_a_frozen_broker_gives_up_within_its_timeout(broker_on_own_redis, settings):
    settings.QUEUE_PUBLISH_TIMEOUT = 0.3
    assert send_now("papers.analyse_paper", 1) == ""  # the broker takes it
    os.kill(broker_on_own_redis.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        failure = send_now("papers.analyse_paper", 2)
        elapsed = time.monotonic() - started
        assert failure and elapsed < 1.5, (failure, elapsed)
        # Left alone for QUEUE_RETRY_AFTER: the next send does not wait at all.
        started = time.monotonic()
        assert send_now("papers.analyse_paper", 3) == failure
        assert time.monotonic() - started < 0.05
    finally:
        os.kill(broker_on_own_redis.pid, signal.SIGCONT)
    broker_forget_failure()
    assert send_now("papers.analyse_paper", 4) == ""
