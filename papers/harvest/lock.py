"""One harvest per set at a time, across every process: a lock held by a heartbeat.

The lock is a key in the `coordination` cache (Redis in production, never a fallback that would
hold per process: an unreachable Redis is an error) added with a short expiry, HARVEST_LOCK_TTL
(120 s), and renewed by a heartbeat thread every third of it for as long as the run lives, so a
run killed with SIGKILL frees its set within HARVEST_LOCK_TTL instead of hours. Each beat also
stamps the run's `heartbeat_at`: a run still "running" whose heartbeat is older than
HARVEST_LOCK_TTL is dead (the admin shows it as stale, the next harvest of its set resumes it),
and `harvest_arxiv --break-lock` frees the set of a dead run at once.

The heartbeat is a thread because one page can take far longer than the TTL (arXiv's longest
backoff is 15 minutes); it touches nothing of the harvest but the lock key and that column.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from wovepaper.lib.cache import coordination_cache
from wovepaper.lib.repeating import Repeating

from ..models import HarvestRun

logger = logging.getLogger(__name__)


class HarvestLocked(Exception):
    """Another harvest of the same set holds the lock."""


class HarvestLockLost(Exception):
    """The lock lapsed while the run lived (its heartbeat could not renew it in time) and
    another process may have taken the set: this process stops harvesting it."""


def harvest_lock_key(set_spec: str) -> str:
    return f"harvest-lock:{set_spec or '*'}"


@dataclass
class HarvestLock:
    key: str
    token: str
    ttl: int
    lost: threading.Event = field(default_factory=threading.Event)

    def renew(self) -> bool:
        """Extend the hold by the TTL; False (and `lost` set) if the key is no longer ours."""
        if coordination_cache().get(self.key) != self.token:
            self.lost.set()
            return False
        coordination_cache().touch(self.key, self.ttl)
        return True

    def release(self) -> None:
        # Only our own lock: after a lapse someone else may hold it now.
        if coordination_cache().get(self.key) == self.token:
            coordination_cache().delete(self.key)


@contextmanager
def harvest_lock(set_spec: str) -> Iterator[HarvestLock]:
    """Hold the set's lock, or raise HarvestLocked without waiting."""
    # Who holds it, for `harvest_arxiv --break-lock` and for operators reading the key.
    holder = f"{socket.gethostname()} pid {os.getpid()} {uuid.uuid4().hex}"
    lock = HarvestLock(harvest_lock_key(set_spec), holder, settings.HARVEST_LOCK_TTL)
    if not coordination_cache().add(lock.key, lock.token, timeout=lock.ttl):
        raise HarvestLocked(f"another harvest of set {set_spec or '(all)'!r} is running")
    try:
        yield lock
    finally:
        try:
            lock.release()
        except Exception as exc:  # the cache went away: the key lapses by itself
            logger.warning(
                "could not release %s (it lapses within %d s): %s", lock.key, lock.ttl, exc
            )


class Heartbeat(Repeating):
    """Renews `lock` and stamps the run's `heartbeat_at` every third of the TTL, on a thread."""

    def __init__(self, lock: HarvestLock, run_id: int):
        super().__init__(interval=lock.ttl / 3, name=f"harvest-heartbeat-{run_id}")
        self.lock = lock
        self.run_id = run_id

    def beat(self) -> None:
        try:
            if not self.lock.renew():
                logger.error(
                    "harvest run %s lost %s: stopping after this page", self.run_id, self.lock.key
                )
                return
            HarvestRun.objects.filter(pk=self.run_id).update(heartbeat_at=timezone.now())
        except Exception as exc:  # a missed beat is not fatal; a lost lock is noticed above
            logger.warning("harvest run %s: heartbeat failed: %s", self.run_id, exc)


# ---------------------------------------------------------------------------------------------
# Dead runs


def harvest_runs_stale(now: datetime | None = None) -> QuerySet[HarvestRun]:
    """Runs marked running whose heartbeat stopped: their process is gone."""
    return HarvestRun.objects.filter(status=HarvestRun.Status.RUNNING).filter(
        Q(heartbeat_at__lt=HarvestRun.stale_before(now)) | Q(heartbeat_at__isnull=True)
    )


def _holder_is_dead_here(holder: str) -> bool:
    """Whether the lock's holder was a process of this machine that no longer exists."""
    host, _, rest = holder.partition(" pid ")
    pid = rest.split(" ", 1)[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # it exists, under another user
        return False
    return False


def harvest_lock_break(set_spec: str) -> str:
    """Free the set's lock if its holder is dead; say what was done.

    The holder is dead when it was a process of this machine that is gone (a harvest killed
    here can be resumed at once), or when no run of the set has a live heartbeat. Refuses
    (HarvestLocked) otherwise: breaking a live run's lock would let a second harvest of the
    set run beside it.
    """
    key = harvest_lock_key(set_spec)
    label = set_spec or "(all)"
    holder = coordination_cache().get(key)
    if holder is None:
        return f"set {label!r} is not locked"
    if _holder_is_dead_here(holder):
        coordination_cache().delete(key)
        return f"broke the lock of set {label!r}: its holder ({holder.rsplit(' ', 1)[0]}) is gone"
    alive = (
        HarvestRun.objects.filter(
            set_spec=set_spec,
            status=HarvestRun.Status.RUNNING,
            heartbeat_at__gte=HarvestRun.stale_before(),
        )
        .order_by("-heartbeat_at")
        .first()
    )
    if alive is not None:
        raise HarvestLocked(
            f"run {alive.pk} of set {label!r} is alive (heartbeat at "
            f"{alive.heartbeat_at:%H:%M:%S} UTC, lock held by {holder.rsplit(' ', 1)[0]}); "
            "its lock is not broken"
        )
    coordination_cache().delete(key)
    return f"broke the lock of set {label!r}: no run of it has a live heartbeat"
