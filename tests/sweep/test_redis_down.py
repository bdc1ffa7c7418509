"""Redis stopped and frozen under requests, with a Redis this test starts on a port of its own.

The cache degrades: the pages, the API (throttle counters), the sitemap, the schema and the
sign-in POST answer as without a cache, and one line says so. The harvest lock and the shared
rate limiter do not fall back to anything process-local: they fail loudly.
"""

from __future__ import annotations

import logging
import os
import signal
import time

import pytest
import redis
from django.contrib.auth import get_user_model
from django.core.cache import caches

from papers.harvest.lock import harvest_lock
from tests.sweep import production_caches
from wovepaper.lib.http import RateLimiter

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-sweep-passphrase-3"
DEGRADED = "cache unreachable"


@pytest.fixture
def site_on_own_redis(own_redis, settings, paper_factory):
    process = own_redis.start()
    url = own_redis.url
    settings.CACHES = production_caches(url, retry_after=0.5, coordination_timeout=1)
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    paper_factory(title="A paper read while Redis is away")
    user = get_user_model().objects.create_user("reader", "reader@example.org", PASSWORD)
    from allauth.account.models import EmailAddress

    EmailAddress.objects.create(user=user, email=user.email, primary=True, verified=True)
    return process, own_redis.start, user


def _answers(client, user) -> dict[str, int]:
    client.raise_request_exception = False
    codes = {}
    for path in (
        "/",
        "/papers",
        "/api/v1/papers/",
        "/api/v1/researchers/",
        "/sitemap.xml",
        "/openapi.json",
        "/developers",
    ):
        codes[path] = client.get(path).status_code
    login = client.post("/accounts/login/", {"login": user.email, "password": PASSWORD})
    codes["POST /accounts/login/"] = login.status_code
    client.logout()
    return codes


def _degraded_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(DEGRADED)]


def test_pages_answer_with_redis_stopped_and_the_lock_fails_loudly(
    client, site_on_own_redis, caplog
):
    process, _, user = site_on_own_redis
    expected = _answers(client, user)
    assert set(expected.values()) <= {200, 302}, expected

    process.kill()
    process.wait(timeout=10)
    caplog.set_level(logging.WARNING, logger="wovepaper.lib.cache")
    for _ in range(3):
        assert _answers(client, user) == expected
    # One clear line for the outage, not one per call.
    lines = _degraded_lines(caplog)
    assert len(lines) == 1 and "ConnectionError" in lines[0], lines

    # What must hold across processes never falls back to a cache of this process alone.
    with pytest.raises(redis.RedisError):
        with harvest_lock("cs"):
            pass
    with pytest.raises(redis.RedisError):
        RateLimiter("arxiv", 1.0).acquire()


def test_pages_answer_with_redis_frozen_and_recover(client, site_on_own_redis, caplog):
    process, _, user = site_on_own_redis
    expected = _answers(client, user)
    caplog.set_level(logging.WARNING, logger="wovepaper.lib.cache")

    os.kill(process.pid, signal.SIGSTOP)  # accepts connections, answers nothing
    try:
        for _ in range(3):
            assert _answers(client, user) == expected
        lines = _degraded_lines(caplog)
        assert len(lines) == 1 and "TimeoutError" in lines[0], lines
        with pytest.raises(redis.RedisError):
            with harvest_lock("cs"):
                pass
    finally:
        os.kill(process.pid, signal.SIGCONT)

    # Back: after RETRY_AFTER the cache is asked again, and says so once.
    time.sleep(0.6)
    assert _answers(client, user) == expected
    assert any(r.getMessage() == "cache reachable again" for r in caplog.records)
    caches["default"].set("sweep", 1)
    assert caches["default"].get("sweep") == 1
