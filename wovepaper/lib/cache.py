"""A Redis cache that degrades instead of taking pages down when Redis is down or frozen.

Web requests use the default cache for what can be lost: page fragments, figures, sitemaps,
session reads (sessions are also in the database), the API throttles' and allauth's rate-limit
counters. With Redis unreachable, `RedisCache` raised on every call, and a frozen Redis held
each request for the socket timeout: the home page, every API endpoint, the sitemap and the
sign-in answered 500. `FailOpenRedisCache` answers as an empty cache instead (reads miss, writes
are dropped; limits fail open), logs one line when Redis goes away and one when it is back, and
stops asking it for `retry_after` seconds after a failure so a frozen Redis costs one short
timeout, not one per call.

What must not be lost or duplicated does not use it: the harvest lock and the external APIs'
shared rate limiter use the `coordination` alias, a plain RedisCache that fails loudly
(`coordination_cache()`; see settings.CACHES).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.core.cache import caches
from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

COORDINATION_ALIAS = "coordination"


def coordination_cache() -> BaseCache:
    """The cache for locks and shared rate limits: never one that fails open."""
    return caches[COORDINATION_ALIAS]


class ReusedClientsRedisCacheClient(RedisCacheClient):
    """One redis-py client per connection pool, kept, instead of a new one per cache call as
    Django's client makes: building one fills its table of ~170 response callbacks, which
    cost more CPU than the cached page hit it served (a redis-py client is thread-safe: each
    command takes a connection from the pool)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key=None, *, write=False):
        # Django's RedisCacheClient internals, which django-stubs do not declare.
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(  # type: ignore[attr-defined]
                connection_pool=pool
            )
        return client


class FailOpenRedisCache(RedisCache):
    def __init__(self, server, params):
        params = dict(params)
        options = dict(params.get("OPTIONS") or {})
        self.retry_after = float(options.pop("RETRY_AFTER", 5.0))
        params["OPTIONS"] = options
        super().__init__(server, params)
        self._class = ReusedClientsRedisCacheClient
        self._down_until = 0.0
        self._down = False
        self._state = threading.Lock()

    def _call(self, name: str, fallback: Any, *args, **kwargs):
        if self._down and time.monotonic() < self._down_until:
            return fallback
        try:
            result = getattr(super(), name)(*args, **kwargs)
        except RedisError as exc:
            with self._state:
                first = not self._down
                self._down = True
                self._down_until = time.monotonic() + self.retry_after
            if first:
                logger.error(
                    "cache unreachable (%s: %s): serving without it (reads miss, writes are "
                    "dropped, rate limits fail open), trying again every %.0f s",
                    type(exc).__name__,
                    exc,
                    self.retry_after,
                )
            return fallback
        if self._down:
            with self._state:
                was_down, self._down = self._down, False
            if was_down:
                logger.warning("cache reachable again")
        return result

    def get(self, key, default=None, version=None):
        return self._call("get", default, key, default, version)

    def get_many(self, keys, version=None):
        return self._call("get_many", {}, keys, version)

    def has_key(self, key, version=None):
        return self._call("has_key", False, key, version)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call("set", None, key, value, timeout, version)

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        # True, failing open: a lock taken on this cache (allauth's around its counters) would
        # otherwise spin until its wait runs out on every request.
        return self._call("add", True, key, value, timeout, version)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call("touch", False, key, timeout, version)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call("set_many", list(data), data, timeout, version)

    def delete(self, key, version=None):
        return self._call("delete", False, key, version)

    def delete_many(self, keys, version=None):
        return self._call("delete_many", None, keys, version)

    def clear(self):
        return self._call("clear", False)
