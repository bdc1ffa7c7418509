"""Work repeated on a thread of its own for as long as a `with` block runs: the leases and
heartbeats that a long task keeps fresh while it works (wovepaper.lib.leases.LeaseKept,
papers.harvest.lock.Heartbeat)."""

from __future__ import annotations

import threading
from typing import Self

from django.db import connections


class Repeating:
    """Calls `beat()` every `interval` seconds (not at once) until the `with` block ends; the
    thread's own database connection is closed when it stops. `beat` must not raise."""

    def __init__(self, *, interval: float, name: str) -> None:
        self.interval = max(interval, 0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def beat(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                self.beat()
        finally:
            connections.close_all()  # this thread's own connection
