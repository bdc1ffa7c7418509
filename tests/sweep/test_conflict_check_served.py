"""The conflict check's worst request of issue 44, served as production serves it: gunicorn (one
sync worker, the 60 s timeout) on the test's PostgreSQL. One name given 100 times as authors
and 1,000 times as reviewers for 30 years answered after 19.3 s with 70.4 MB of JSON and left
the worker 500 MB larger; folded, it is one check, answered fast and small, and the worker does
not grow. (PostgreSQL only: a gunicorn process shares the test database only there.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime

import psutil
import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from papers.models import Authorship
from researchers.models import Researcher
from researchers.names import name_key
from tests.workers import ROOT, database_url, free_port, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

SECONDS = 5.0
GROWTH_BYTES = 50 * 1024 * 1024


def _worker_rss(master: subprocess.Popen) -> int:
    (worker,) = psutil.Process(master.pid).children()
    return worker.memory_info().rss


def _post(url: str, body: dict, token: str) -> tuple[int, bytes, float]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Token {token}"},
    )
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=90) as response:
        return response.status, response.read(), time.monotonic() - started


def test_a_thousand_repeated_names_are_one_small_fast_check(tmp_path, paper_factory):
    ilya = Researcher.objects.create(
        display_name="Ilya Sutskever", name_key=name_key("Ilya Sutskever")
    )
    for month in range(1, 13):
        paper = paper_factory(
            authors=["Ilya Sutskever", "Someone Else"],
            published=datetime(2025, month, 1, tzinfo=UTC),
        )
        Authorship.objects.filter(paper=paper, position=1).update(researcher=ilya)
    user = get_user_model().objects.create_user("chair", "chair@example.org", "pw-12345678")
    token = Token.objects.create(user=user).key

    port = free_port()
    log_path = tmp_path / "gunicorn.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "REDIS_"))}
    env.update(DATABASE_URL=database_url(), WOVEPAPER_DATA_DIR=str(tmp_path), CELERY_BROKER_URL="")
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "wovepaper.wsgi"]
            + ["-b", f"127.0.0.1:{port}", "-w", "1", "--timeout", "60"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for(
                lambda: b"ready (warm-up" in log_path.read_bytes(),
                timeout=90,
                what="the gunicorn worker",
                on_timeout=log_path.read_text,
            )
            url = f"http://127.0.0.1:{port}/api/v1/conflicts/"
            # A first check of one name each way: the worker's own first-request costs.
            _post(url, {"authors": ["Ilya Sutskever"], "reviewers": ["Someone"]}, token)
            before = _worker_rss(server)
            body = {
                "authors": ["Ilya Sutskever"] * 100,
                "reviewers": ["Ilya Sutskever"] * 1000,
                "years": 30,
            }
            status, answer, seconds = _post(url, body, token)
            grown = _worker_rss(server) - before
        finally:
            server.terminate()
            server.wait(timeout=30)
    assert status == 200
    data = json.loads(answer)
    assert [f["same_record"] for f in data["flags"]] == [True]
    assert len(answer) < 5_000
    assert seconds < SECONDS, seconds
    assert grown < GROWTH_BYTES, grown
