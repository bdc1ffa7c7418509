"""Chains of backlog batches: how the match workers drain the backlog faster than beat's one
batch a minute, and no more than MATCH_PARALLEL_BATCHES batches at a time.

Each chain holds a slot, a cache key (Redis in production, shared by every worker) whose value
is the chain's token and which lapses MATCH_CHAIN_SECONDS after the chain last renewed it. A
backlog batch that matched something starts a chain in every free slot, and a chain's batch
that matched something queues the chain's next batch; a batch that finds nothing (or fails)
ends its chain and frees the slot. A chain whose message was lost, or whose worker died,
frees its slot when the key lapses, and beat's next batch starts another. The claims
(`claim`) keep chains from matching the same papers; the slots only bound how many run.

The slots live in the coordination cache, which never fails open (the default cache would
answer every `add` with True while Redis is down, and chains would multiply). With Redis
unreachable no chain starts or goes on, and beat's batch a minute carries the backlog alone.
"""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from redis.exceptions import RedisError

from wovepaper.lib.cache import coordination_cache

logger = logging.getLogger(__name__)


def _key(slot: str) -> str:
    # Per deployment: two deployments (or test runs) sharing a Redis keep their own slots.
    return f"{settings.CELERY_QUEUE_PREFIX}match-chain:{slot}"


def _slot(token: str) -> str:
    return token.split(":", 1)[0]


def chain_slots_take() -> list[str]:
    """Take every free slot; returns a token per chain to start (none when all are held)."""
    tokens = []
    try:
        for slot in range(settings.MATCH_PARALLEL_BATCHES):
            token = f"{slot}:{uuid.uuid4().hex}"
            if coordination_cache().add(_key(str(slot)), token, settings.MATCH_CHAIN_SECONDS):
                tokens.append(token)
    except RedisError as exc:
        logger.warning("no matching chain started: the cache is unreachable (%s)", exc)
    return tokens


def chain_slot_renew(token: str) -> bool:
    """Whether the chain still holds its slot; if so, it holds it MATCH_CHAIN_SECONDS more. A
    chain that waited in the queue past its lapse finds its slot free or another's, and ends."""
    key = _key(_slot(token))
    try:
        if coordination_cache().get(key) != token:
            return False
        coordination_cache().touch(key, settings.MATCH_CHAIN_SECONDS)
    except RedisError as exc:
        logger.warning("matching chain %s ends: the cache is unreachable (%s)", token, exc)
        return False
    return True


def chain_slot_release(token: str) -> None:
    key = _key(_slot(token))
    try:
        if coordination_cache().get(key) == token:
            coordination_cache().delete(key)
    except RedisError as exc:
        # The slot lapses by itself after MATCH_CHAIN_SECONDS.
        logger.warning("matching chain %s not released: the cache is unreachable (%s)", token, exc)
