def production_caches(url: str, *, retry_after: float, coordination_timeout: float | None = None):
    """settings.CACHES as production configures them (wovepaper/settings.py), on `url`: the
    fail-open default cache (0.25 s timeouts, `retry_after`) and the coordination cache that
    fails loudly (`coordination_timeout`, else redis-py's own)."""
    coordination: dict = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    if coordination_timeout is not None:
        coordination["OPTIONS"] = {
            "socket_connect_timeout": coordination_timeout,
            "socket_timeout": coordination_timeout,
        }
    return {
        "default": {
            "BACKEND": "wovepaper.lib.cache.FailOpenRedisCache",
            "LOCATION": url,
            "OPTIONS": {
                "socket_connect_timeout": 0.25,
                "socket_timeout": 0.25,
                "RETRY_AFTER": retry_after,
            },
        },
        "coordination": coordination,
    }
