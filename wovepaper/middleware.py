"""Middleware the whole site shares."""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import Http404, HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control

from wovepaper.lib.api.errors import api_not_found

# C0 controls and DEL. No URL of ours holds one (ids, slugs, ROR ids, names and tokens never do),
# and PostgreSQL refuses NUL in a text comparison with a DataError, so a key lookup given one
# would answer 500 instead of "not found".
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")


class ControlCharacterPathMiddleware:
    """A path with a control character names nothing: 404 (the API's JSON one under /api/)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if CONTROL_CHARACTERS.search(request.path):
            if request.path.startswith("/api/"):
                return api_not_found(request)
            raise Http404("control character in the path")
        return self.get_response(request)


class PrivateByDefaultMiddleware:
    """A response to a signed-in reader that says nothing of caching is `private, no-store`.

    Pages such as the account settings (the API token), the chat, `/following` and the
    onboarding are the reader's alone; without a Cache-Control a browser's back-forward cache or
    a proxy may keep them. Pages that are meant to be kept say so themselves (the page cache's
    shared signed-in bodies are `private, max-age`), so this only fills the silence.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code >= 500 or response.has_header("Cache-Control"):
            return response  # an error page must not ask the database who is signed in
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            patch_cache_control(response, private=True, no_store=True)
        return response
