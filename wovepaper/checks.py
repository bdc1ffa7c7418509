"""System checks for how the processes are wired together (`manage.py check`)."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Tags, Warning, register

BROKER_WITHOUT_REDIS = "wovepaper.W001"


@register(Tags.caches, deploy=False)
def broker_without_shared_cache(app_configs, **kwargs) -> list[Warning]:
    """With a broker there are several processes; without REDIS_URL each has its own
    local-memory cache, so what must be shared is not: the per-service rate limits (arXiv's one
    request every 3 s would be one per process), the harvest lock (two harvests of one set could
    run at once) and the API throttles."""
    backend = str(settings.CACHES["default"]["BACKEND"])
    if not settings.CELERY_BROKER_URL or not backend.endswith(("LocMemCache", "DummyCache")):
        return []
    return [
        Warning(
            "CELERY_BROKER_URL is set but REDIS_URL is not: every process keeps its own "
            "cache, so the external APIs' rate limits, the harvest lock and the API throttles "
            "hold per process, not across the workers.",
            hint="Set REDIS_URL to the Redis every web and worker process shares.",
            id=BROKER_WITHOUT_REDIS,
        )
    ]
