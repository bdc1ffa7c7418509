"""Middleware the whole site shares."""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import Http404, HttpRequest, HttpResponse

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
