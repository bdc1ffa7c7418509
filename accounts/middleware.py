"""Send a signed-in user whose onboarding is unfinished to the chat, from any page.

As on the reference site, a new account lands on /chat: signing in is what unlocks chat with the
papers, so that is where a new reader starts. The chat page offers the onboarding steps (fields,
researchers to follow, "this is me"), which stay reachable, with a way to skip them.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect

from .selectors import onboarding_pending

# Paths a user in onboarding can still reach: signing out, onboarding itself, the links in
# emails (confirming an address, resetting a password, unsubscribing), the chat (where they are
# sent), and what is not a page (static files, admin, the API). POSTs (follow buttons in the
# onboarding steps) pass anyway.
EXEMPT_PREFIXES = (
    "/accounts/logout/",
    "/accounts/confirm-email/",
    "/accounts/password/reset/",
    "/accounts/reauthenticate/",
    "/onboarding/",
    "/digest/unsubscribe/",
    # Where they land (its conversations and the streamed answer are GETs too).
    "/chat",
    "/admin/",
    "/api/",
    # A signed-in reader's parts of a page (a fragment, not a page).
    "/me/",
    "/favicon",
    "/robots.txt",
)


class OnboardingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response
        self.exempt = EXEMPT_PREFIXES + (settings.STATIC_URL,)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self._should_redirect(request):
            target = reverse("chat:page")
            if getattr(request, "htmx", False):
                return HttpResponseClientRedirect(target)
            return redirect(target)
        return self.get_response(request)

    def _should_redirect(self, request: HttpRequest) -> bool:
        # Only page views: a POST is an action (and redirecting it would drop its data).
        if request.method not in ("GET", "HEAD"):
            return False
        if request.path.startswith(self.exempt):
            return False
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return False
        return onboarding_pending(user=user)
