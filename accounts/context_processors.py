"""What every page's template may ask of the signed-in reader."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from wovepaper.lib.pagecache import rendering_shared_signed_in_page

from .onboarding import onboarding_pending


def onboarding(request: HttpRequest) -> dict:
    """`onboarding_pending`: whether to offer the setup (one query, and only for a signed-in
    reader on a page that shows the offer). Shared cached pages hold it hidden, for reader.js to
    show from the reader's state (accounts.reader_state).

    `reader_shared`: the page being rendered is the body every signed-in reader shares, whose
    signed-in parts (the account links, the offer) are the same for all and whose tokens
    reader.js fills in."""

    def pending() -> bool:
        user = getattr(request, "user", None)
        return bool(user is not None and user.is_authenticated and onboarding_pending(user=user))

    return {
        "onboarding_pending": SimpleLazyObject(pending),
        "reader_shared": rendering_shared_signed_in_page(request),
    }
