"""`manage.py check` says when the processes are wired so that what must be shared is not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.core.checks import run_checks

from wovepaper.checks import BROKER_WITHOUT_REDIS

ROOT = Path(__file__).resolve().parent.parent


def _ids() -> set[str]:
    return {message.id for message in run_checks()}


def test_a_broker_without_a_shared_cache_is_a_warning(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/4"
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    assert BROKER_WITHOUT_REDIS in _ids()
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:6379/4",
        }
    }
    assert BROKER_WITHOUT_REDIS not in _ids()
    settings.CELERY_BROKER_URL = ""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    assert BROKER_WITHOUT_REDIS not in _ids()  # the embedded default: one process


def _manage_py_check(env: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


def test_manage_py_check_prints_it_with_its_id():
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "DATABASE_URL"}}
    env["CELERY_BROKER_URL"] = "redis://127.0.0.1:6379/4"
    expected = f"({BROKER_WITHOUT_REDIS}) CELERY_BROKER_URL is set but REDIS_URL is not"
    assert expected in _manage_py_check(env)
    env["REDIS_URL"] = "redis://127.0.0.1:6379/4"
    assert BROKER_WITHOUT_REDIS not in _manage_py_check(env)
