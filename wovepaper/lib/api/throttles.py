"""The API's rate limits, read from settings at request time."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from rest_framework import throttling


class AnonRateThrottle(throttling.AnonRateThrottle):
    """Per client IP. The rate is read from settings at request time (DRF's class binds it at
    import), so operators and tests can change API_THROTTLE_RATES."""

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATES.get(self.scope or "")


class UserRateThrottle(throttling.UserRateThrottle):
    """Per signed-in account (anonymous requests fall back to the IP, but AnonRateThrottle is
    the one that limits those)."""

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATES.get(self.scope or "")

    def allow_request(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return True
        return super().allow_request(request, view)


def throttled_like_the_api(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A site view under the API's own rate limits (per IP, and per account when signed in),
    counted with the API's requests: for the site's routes that do what an API endpoint does,
    such as the citation exports (a shared list's, a researcher's, a search's), which were
    unthrottled while the API's were. Past a limit: 429 with Retry-After."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        for throttle in (AnonRateThrottle(), UserRateThrottle()):
            # DRF's throttles read only .user and .META, which a Django request has too.
            if not throttle.allow_request(request, None):  # type: ignore[arg-type]
                wait = int((throttle.wait() or 0) + 0.999)
                response = HttpResponse(
                    f"Too many requests; try again in {max(wait, 1)} s.",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                )
                response["Retry-After"] = str(max(wait, 1))
                return response
        return view(request, *args, **kwargs)

    return wrapped
