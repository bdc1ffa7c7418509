"""The sweep's own budget can fail: a request that keeps 80 MB is caught, one that frees what it
used is not, and overlapping requests are not charged with each other's memory."""

from __future__ import annotations

from django.core.signals import request_finished, request_started

from .conftest import RequestBudget

KEPT: list[bytearray] = []


def _request(path: str, work) -> None:
    request_started.send(sender=None, environ={"PATH_INFO": path})
    work()
    request_finished.send(sender=None)


def test_a_request_that_keeps_eighty_megabytes_is_caught(every_request_within_budget, db):
    with RequestBudget() as budget:
        _request("/keeps", lambda: KEPT.append(bytearray(80 * 1024 * 1024)))
        _request("/frees", lambda: bytearray(80 * 1024 * 1024))
    KEPT.clear()
    assert [path for path, _ in budget.grown] == ["/keeps"]
    assert budget.grown[0][1] >= 75
    # The sweep's own watch saw the same request; this test's request was made to be caught.
    assert [path for path, _ in every_request_within_budget.grown] == ["/keeps"]
    every_request_within_budget.grown.clear()
