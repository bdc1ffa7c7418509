"""Every request a sweep test sends through Django is held to a time and a memory budget: a
hostile input must be refused or answered, never worked on until the worker timeout, nor leave
the worker larger. Timed from Django's request_started to request_finished (the test client
sends the latter when it closes the response), in the thread that sent it. Memory is the
process's resident size at those two moments (what a worker keeps after a request, as the sweep
of issue 44 measured it), compared for requests no other request overlapped: concurrent
requests of the parallel tests share one process and would count each other's."""

from __future__ import annotations

import threading
import time

import psutil
import pytest
from django.core.signals import request_finished, request_started

REQUEST_BUDGET_SECONDS = 5.0
REQUEST_BUDGET_BYTES = 50 * 1024 * 1024


class RequestBudget:
    """Watches Django's request signals while open; `slow` and `grown` list the requests past
    the budgets."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.process = psutil.Process()
        self.lock = threading.Lock()
        self.requests = 0
        self.overlapped = 0
        self.slow: list[tuple[str, float]] = []
        self.grown: list[tuple[str, int]] = []

    def started(self, sender, environ=None, **kwargs) -> None:
        with self.lock:
            self.requests += 1
            if self.requests > 1:
                self.overlapped += 1
            self.local.overlapped_before = self.overlapped
        self.local.path = (environ or {}).get("PATH_INFO", "?")
        self.local.rss = self.process.memory_info().rss
        self.local.started = time.monotonic()

    def finished(self, sender, **kwargs) -> None:
        began = getattr(self.local, "started", None)
        if began is None:
            return
        self.local.started = None
        seconds = time.monotonic() - began
        growth = self.process.memory_info().rss - self.local.rss
        with self.lock:
            alone = self.requests == 1 and self.overlapped == self.local.overlapped_before
            self.requests -= 1
        if seconds > REQUEST_BUDGET_SECONDS:
            self.slow.append((self.local.path, round(seconds, 2)))
        if alone and growth > REQUEST_BUDGET_BYTES:
            self.grown.append((self.local.path, growth // (1024 * 1024)))

    def __enter__(self) -> RequestBudget:
        request_started.connect(self.started, weak=False)
        request_finished.connect(self.finished, weak=False)
        return self

    def __exit__(self, *exc) -> None:
        request_started.disconnect(self.started)
        request_finished.disconnect(self.finished)


_warmed: list[bool] = []


def _warm_up_as_a_worker_does() -> None:
    """What a production worker loads before its first request (wovepaper.warmup, the steps
    that need no database): the templates, the URLs and the encoder's model. Otherwise the
    first request of this process is charged with them (the home page with 69 MB)."""
    if _warmed:
        return
    from wovepaper.lib.embeddings import text_encoder
    from wovepaper.warmup import compile_templates, load_urls

    compile_templates()
    load_urls()
    encoder = text_encoder()
    if encoder.is_prepared():
        encoder.prepare()
    _warmed.append(True)


@pytest.fixture(autouse=True)
def every_request_within_budget():
    _warm_up_as_a_worker_does()
    with RequestBudget() as budget:
        yield budget
    assert budget.slow == [], f"requests past {REQUEST_BUDGET_SECONDS:g} s"
    assert budget.grown == [], (
        f"requests that grew the process past {REQUEST_BUDGET_BYTES // 2**20} MB"
    )
