"""Middleware the whole site shares."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.utils.cache import patch_cache_control

from wovepaper.lib.api.errors import api_not_found, error_body
from wovepaper.lib.api.schema import NUL_REFUSED

# C0 controls and DEL. No URL of ours holds one (ids, slugs, ROR ids, names and tokens never do),
# and PostgreSQL refuses NUL in a text comparison with a DataError, so a key lookup given one
# would answer 500 instead of "not found".
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")


def _fields_with_nul(request: HttpRequest) -> list[str]:
    """The query parameters and the form's or JSON body's fields whose text holds a NUL. File
    contents are not looked at: a file may hold any bytes."""
    found = []
    if "%00" in request.META.get("QUERY_STRING", ""):
        found += [name for name, values in request.GET.lists() if _nul_in(name, values)]
    if request.method not in ("POST", "PUT", "PATCH"):
        return found
    if request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        found += [name for name, values in request.POST.lists() if _nul_in(name, values)]
    elif (request.content_type or "").endswith(("/json", "+json")):
        if b"\\u0000" in request.body.lower():
            try:
                data = json.loads(request.body)
            except ValueError:
                return found  # not JSON: the view's parser says so
            if isinstance(data, dict):
                found += [k for k, v in data.items() if _holds_nul(k) or _holds_nul(v)]
            else:
                found.append("non_field_errors")
    return found


def _holds_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    return False


def _nul_in(name: str, values: list[str]) -> bool:
    return "\x00" in name or any("\x00" in value for value in values)


class RequestBodyLimitMiddleware:
    """A body whose Content-Length is past REQUEST_MAX_BODY_BYTES is refused with 413 before
    anything reads it. Django bounds a form's fields (DATA_UPLOAD_MAX_MEMORY_SIZE) but reads an
    uploaded file whole, to memory and then to disk, before a view can look at its size: a 60 MB
    file was read through before the import said it was too large. Under /api/ the answer keeps
    the API's JSON error shape."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0  # Django reads an unparsable length as none
        limit = settings.REQUEST_MAX_BODY_BYTES
        if length <= limit:
            return self.get_response(request)
        message = f"The request body is larger than {limit // (1024 * 1024)} MB."
        if request.path.startswith("/api/"):
            return JsonResponse(error_body(413, "too_large", message), status=413)
        return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")


class ControlCharacterMiddleware:
    """The one rule for control characters from a request. A path with one names nothing: 404.
    A NUL in a query parameter or in a form's or JSON body's text is refused with 400 before
    any view sees it: PostgreSQL can neither store nor compare text holding one (a DataError,
    so a 500), and no field of ours means one. Under /api/ both answers keep the API's JSON
    error shape."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        api = request.path.startswith("/api/")
        if CONTROL_CHARACTERS.search(request.path):
            if api:
                return api_not_found(request)
            raise Http404("control character in the path")
        if fields := _fields_with_nul(request):
            if api:
                body = error_body(
                    400, "invalid", NUL_REFUSED, fields={f: [NUL_REFUSED] for f in fields}
                )
                return JsonResponse(body, status=400)
            return HttpResponseBadRequest(NUL_REFUSED, content_type="text/plain; charset=utf-8")
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
