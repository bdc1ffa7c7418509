"""Chains of batches: how workers drain a backlog faster than beat's one batch a period, and no
more than a set number of batches at a time.

Each chain holds a slot, a cache key (Redis in production, shared by every worker) whose value
is the chain's token and which lapses `seconds` after the chain last renewed it. A batch that
did some work starts a chain in every free slot, and a chain's batch that did some work queues
the chain's next batch; a batch that finds nothing (or fails) ends its chain and frees the
slot. A chain whose message was lost, or whose worker died, frees its slot when the key lapses,
and beat's next batch starts another. The work's claims (wovepaper.lib.leases) keep chains off
each other's rows; the slots only bound how many run.

The slots live in the coordination cache, which never fails open (the default cache would
answer every `add` with True while Redis is down, and chains would multiply). With Redis
unreachable no chain starts or goes on, and beat's batch carries the backlog alone.

Used by matching (`match`, researchers.matching.chains) and embedding (`embed`,
papers.tasks). Imports no app.
"""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from redis.exceptions import RedisError

from .cache import coordination_cache

logger = logging.getLogger(__name__)


def _key(kind: str, slot: str) -> str:
    # Per deployment: two deployments (or test runs) sharing a Redis keep their own slots.
    return f"{settings.CELERY_QUEUE_PREFIX}{kind}-chain:{slot}"


def _slot(token: str) -> str:
    return token.split(":", 1)[0]


def chain_slots_take(kind: str, *, slots: int, seconds: int) -> list[str]:
    """Take every free slot of `kind`'s `slots`; returns a token per chain to start (none when
    all are held)."""
    tokens = []
    try:
        for slot in range(slots):
            token = f"{slot}:{uuid.uuid4().hex}"
            if coordination_cache().add(_key(kind, str(slot)), token, seconds):
                tokens.append(token)
    except RedisError as exc:
        logger.warning("no %s chain started: the cache is unreachable (%s)", kind, exc)
    return tokens


def chain_slot_renew(kind: str, token: str, *, seconds: int) -> bool:
    """Whether the chain still holds its slot; if so, it holds it `seconds` more. A chain that
    waited in the queue past its lapse finds its slot free or another's, and ends."""
    key = _key(kind, _slot(token))
    try:
        if coordination_cache().get(key) != token:
            return False
        coordination_cache().touch(key, seconds)
    except RedisError as exc:
        logger.warning("%s chain %s ends: the cache is unreachable (%s)", kind, token, exc)
        return False
    return True


def chain_slot_release(kind: str, token: str) -> None:
    key = _key(kind, _slot(token))
    try:
        if coordination_cache().get(key) == token:
            coordination_cache().delete(key)
    except RedisError as exc:
        # The slot lapses by itself.
        logger.warning("%s chain %s not released: the cache is unreachable (%s)", kind, token, exc)
