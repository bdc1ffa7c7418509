"""What the site answers when a dependency fails, and a health endpoint that names it.

A database that cannot be reached is a 503 with `Retry-After`, never Django's HTML 500: a load
balancer and a client both know to come back. Under `/api/` every error keeps the API's JSON
shape. `/health` asks the database and the cache directly, with nothing cached, and says which
one is down, so `deploy/healthcheck.sh` can say it too.
"""

from __future__ import annotations

import logging
import sys

from django.core.cache import cache
from django.db import DatabaseError, InterfaceError, OperationalError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_safe

from wovepaper.lib.api.errors import error_body

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 30


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500. Rendered without the request's context: the database may be what failed."""
    failure = sys.exc_info()[1]
    unavailable = isinstance(failure, OperationalError | InterfaceError)
    status = 503 if unavailable else 500
    if request.path.startswith("/api/"):
        code = "unavailable" if unavailable else "server_error"
        message = (
            "The service is briefly unavailable: try again shortly."
            if unavailable
            else "Something went wrong on our side; it has been logged."
        )
        response: HttpResponse = JsonResponse(error_body(status, code, message), status=status)
    else:
        page = render_to_string("wovepaper/server_error.html", {"unavailable": unavailable})
        response = HttpResponse(page, status=status)
    if unavailable:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    patch_cache_control(response, no_store=True)
    return response


def _database_state() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as error:
        return f"down: {type(error).__name__}"
    return "ok"


def _cache_state() -> str:
    # The default cache fails open (wovepaper.lib.cache): an unreachable Redis reads as a miss,
    # so a value written now and read back is the only proof that it answers.
    probe = "health:probe"
    try:
        cache.set(probe, "1", 10)
        answered = cache.get(probe) == "1"
    except Exception as error:  # noqa: BLE001 (any backend's connection error)
        return f"down: {type(error).__name__}"
    return "ok" if answered else "down: no answer"


@require_safe
def health(request: HttpRequest) -> JsonResponse:
    """200 when the database and the cache answer, else 503 naming the one that does not."""
    checks = {"database": _database_state(), "cache": _cache_state()}
    healthy = all(state == "ok" for state in checks.values())
    response = JsonResponse({"status": "ok" if healthy else "unavailable", "checks": checks})
    if not healthy:
        response.status_code = 503
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        log.warning("health: %s", checks)
    patch_cache_control(response, no_store=True)
    return response
