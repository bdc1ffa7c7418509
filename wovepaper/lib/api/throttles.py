"""The API's rate limits, read from settings at request time."""

from __future__ import annotations

from django.conf import settings
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
