"""The API's one error body, its DRF exception handler and the JSON 404 for unknown URLs."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponsePermanentRedirect, JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .redirects import permanent_redirect


class Conflict(exceptions.APIException):
    """A request that is well formed but contradicts what the account holds already (a name
    taken, a limit reached): 409, with the reason as the message."""

    status_code = 409
    default_code = "conflict"
    default_detail = "In conflict with what you hold already."


def error_body(status: int, code: str, message: str, **extra: Any) -> dict:
    return {"error": {"status": status, "code": code, "message": message, **extra}}


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's handler (status, headers such as Retry-After), with our one error body."""
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    extra: dict[str, Any] = {}
    if isinstance(exc, exceptions.ValidationError):
        code, message = "invalid", "The request has invalid parameters."
        extra["fields"] = (
            response.data
            if isinstance(response.data, dict)
            else {"non_field_errors": response.data}
        )
    else:
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else ""
        code = getattr(detail, "code", None) or getattr(exc, "default_code", None) or "error"
        message = str(detail) or str(getattr(exc, "default_detail", "Error"))
    # Throttled sets `wait` in __init__; djangorestframework-stubs do not declare it.
    wait = getattr(exc, "wait", None) if isinstance(exc, exceptions.Throttled) else None
    if wait is not None:
        extra["retry_after"] = int(wait + 0.999)
    response.data = error_body(response.status_code, str(code), message, **extra)
    return response


# Exempt because it changes nothing: otherwise an unknown URL answered a POST or DELETE with
# Django's HTML CSRF page instead of the API's JSON 404.
@csrf_exempt
def api_not_found(
    request: HttpRequest, rest: str = ""
) -> JsonResponse | HttpResponsePermanentRedirect:
    """Unknown /api/ URLs answer with the error body, not the HTML 404 page.

    Being a catch-all, it would defeat APPEND_SLASH; so it redirects itself when the URL with a
    slash is a real endpoint.
    """
    path = request.path
    if not path.endswith("/"):
        try:
            match = resolve(path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not api_not_found:
            return permanent_redirect(path + "/", request)
    return JsonResponse(
        error_body(404, "not_found", f"There is no API endpoint at {path}. See /openapi.json."),
        status=404,
    )


class ErrorDetailSerializer(serializers.Serializer):
    status = serializers.IntegerField(help_text="The HTTP status code, repeated.")
    code = serializers.CharField(help_text="A stable machine-readable code, e.g. `not_found`.")
    message = serializers.CharField(help_text="A sentence for humans.")
    # The body's member is named `fields`; the metaclass takes declared fields off the class, so
    # this never hides Serializer.fields.
    fields = serializers.DictField(  # type: ignore[assignment]
        required=False,
        child=serializers.ListField(child=serializers.CharField()),
        help_text="For `invalid`: the problems with each parameter.",
    )
    retry_after = serializers.IntegerField(
        required=False, help_text="For `throttled`: seconds until the next request is allowed."
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


# status → (code, message, the body's extra members)
_ERROR_EXAMPLES: dict[int, tuple[str, str, dict[str, Any]]] = {
    400: (
        "invalid",
        "The request has invalid parameters.",
        {"fields": {"page_size": ["Must be a whole number from 1 to 100."]}},
    ),
    401: ("not_authenticated", "Authentication credentials were not provided.", {}),
    403: ("permission_denied", "CSRF Failed: CSRF token missing.", {}),
    404: ("not_found", "Not found.", {}),
    409: ("conflict", "You already have a list called “Reading list”.", {}),
    413: (
        "too_large",
        "The request body is larger than the 2,621,440 bytes an endpoint reads.",
        {},
    ),
    429: (
        "throttled",
        "Request was throttled. Expected available in 12 seconds.",
        {"retry_after": 12},
    ),
}
_ERROR_DESCRIPTIONS = {
    400: "Invalid parameters; `fields` says what is wrong with each.",
    401: "Not signed in: send `Authorization: Token <key>` or use a browser session.",
    403: "Refused: a session request without its CSRF token.",
    404: "Not found.",
    409: "In conflict with what you hold already; `message` says how.",
    413: "The request body is larger than an endpoint reads (DATA_UPLOAD_MAX_MEMORY_SIZE).",
    429: "Too many requests; wait `Retry-After` seconds (also in the body).",
}
