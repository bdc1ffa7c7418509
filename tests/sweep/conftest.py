"""Every request a sweep test sends through Django is held to a time budget: a hostile input
must be refused or answered, never worked on until the worker timeout. Timed from Django's
request_started to request_finished (the test client sends the latter when it closes the
response), in the thread that sent it."""

from __future__ import annotations

import threading
import time

import pytest
from django.core.signals import request_finished, request_started

REQUEST_BUDGET_SECONDS = 5.0


@pytest.fixture(autouse=True)
def every_request_within_budget():
    local = threading.local()
    slow: list[tuple[str, float]] = []

    def started(sender, environ=None, **kwargs):
        local.path = (environ or {}).get("PATH_INFO", "?")
        local.started = time.monotonic()

    def finished(sender, **kwargs):
        began = getattr(local, "started", None)
        if began is None:
            return
        local.started = None
        seconds = time.monotonic() - began
        if seconds > REQUEST_BUDGET_SECONDS:
            slow.append((local.path, round(seconds, 2)))

    request_started.connect(started, weak=False)
    request_finished.connect(finished, weak=False)
    try:
        yield slow
    finally:
        request_started.disconnect(started)
        request_finished.disconnect(finished)
    assert slow == [], f"requests past {REQUEST_BUDGET_SECONDS:g} s"
