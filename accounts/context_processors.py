"""What every page's template may ask of the signed-in reader."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from .selectors import onboarding_pending


def onboarding(request: HttpRequest) -> dict:
    """`onboarding_pending`: whether to offer the setup (one query, and only for a signed-in
    reader on a page that shows the offer). Shared cached pages render as anonymous readers see
    them; their offer comes with the reader's fragment (accounts.fragments)."""

    def pending() -> bool:
        user = getattr(request, "user", None)
        return bool(user is not None and user.is_authenticated and onboarding_pending(user=user))

    return {"onboarding_pending": SimpleLazyObject(pending)}
