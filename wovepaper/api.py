"""What every API view shares: keyset pagination, the error body, throttles, conditional GET.

The public API is read-only JSON under /api/v1/. Errors always have the body
`{"error": {"status": 404, "code": "not_found", "message": "..."}}` (plus `fields` for invalid
parameters and `retry_after` for 429), whichever view or layer raised them.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.core.validators import ProhibitNullCharactersValidator
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponsePermanentRedirect, JsonResponse
from django.urls import Resolver404, register_converter, resolve
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import conditional_page
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse
from rest_framework import exceptions, serializers, throttling
from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

API_PREFIX = "/api/v1/"


# ---- errors -------------------------------------------------------------------------------------

def error_body(status: int, code: str, message: str, **extra: Any) -> dict:
    return {"error": {"status": status, "code": code, "message": message, **extra}}


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's handler (status, headers such as Retry-After), with our one error body."""
    # Imported here: rest_framework.views loads the throttle classes below from the settings.
    from rest_framework.views import exception_handler as drf_exception_handler

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    extra: dict[str, Any] = {}
    if isinstance(exc, exceptions.ValidationError):
        code, message = "invalid", "The request has invalid parameters."
        extra["fields"] = response.data if isinstance(response.data, dict) else {
            "non_field_errors": response.data}
    else:
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else ""
        code = getattr(detail, "code", None) or getattr(exc, "default_code", "error")
        message = str(detail) or str(getattr(exc, "default_detail", "Error"))
    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        extra["retry_after"] = int(exc.wait + 0.999)
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
    fields = serializers.DictField(
        required=False,
        child=serializers.ListField(child=serializers.CharField()),
        help_text="For `invalid`: the problems with each parameter.",
    )
    retry_after = serializers.IntegerField(
        required=False, help_text="For `throttled`: seconds until the next request is allowed."
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


_ERROR_EXAMPLES = {
    400: ("invalid", "The request has invalid parameters.",
          {"fields": {"page_size": ["Must be a whole number from 1 to 100."]}}),
    401: ("not_authenticated", "Authentication credentials were not provided.", {}),
    403: ("permission_denied", "CSRF Failed: CSRF token missing.", {}),
    404: ("not_found", "Not found.", {}),
    429: ("throttled", "Request was throttled. Expected available in 12 seconds.",
          {"retry_after": 12}),
}
_ERROR_DESCRIPTIONS = {
    400: "Invalid parameters; `fields` says what is wrong with each.",
    401: "Not signed in: send `Authorization: Token <key>` or use a browser session.",
    403: "Refused: a session request without its CSRF token.",
    404: "Not found.",
    429: "Too many requests; wait `Retry-After` seconds (also in the body).",
}


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    out = {}
    for status in statuses:
        code, message, extra = _ERROR_EXAMPLES[status]
        out[status] = OpenApiResponse(
            ErrorSerializer,
            description=_ERROR_DESCRIPTIONS[status],
            examples=[OpenApiExample(code, value=error_body(status, code, message, **extra),
                                     response_only=True, status_codes=[str(status)])],
        )
    return out


def schema_add_throttle_responses(result: dict, generator, request, public) -> dict:
    """drf-spectacular hook: every operation can answer 429, so the schema says so."""
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            responses = operation.setdefault("responses", {})
            if "429" not in responses:
                responses["429"] = {
                    "description": _ERROR_DESCRIPTIONS[429],
                    "headers": {"Retry-After": {
                        "schema": {"type": "integer"},
                        "description": "Seconds to wait before the next request."}},
                    "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Error"},
                        "example": error_body(429, *_ERROR_EXAMPLES[429][:2],
                                              **_ERROR_EXAMPLES[429][2])}},
                }
    return result


class QueryTextField(serializers.CharField):
    """Free text from a query string: NUL characters (which PostgreSQL cannot store or compare)
    are dropped rather than refused, and blank text is allowed (it matches nothing)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)
        self.validators = [v for v in self.validators
                           if not isinstance(v, ProhibitNullCharactersValidator)]

    def to_internal_value(self, data) -> str:
        return super().to_internal_value(data).replace("\x00", "").strip()


# ---- throttles ----------------------------------------------------------------------------------

class AnonRateThrottle(throttling.AnonRateThrottle):
    """Per client IP. The rate is read from settings at request time (DRF's class binds it at
    import), so operators and tests can change API_THROTTLE_RATES."""

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATES.get(self.scope)


class UserRateThrottle(throttling.UserRateThrottle):
    """Per signed-in account (anonymous requests fall back to the IP, but AnonRateThrottle is
    the one that limits those)."""

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return True
        return super().allow_request(request, view)


# ---- pagination ---------------------------------------------------------------------------------

class KeysetPagination(BasePagination):
    """Cursor pagination over the whole ordering tuple (keyset / seek method).

    DRF's CursorPagination positions on the first ordering field only and skips ties with an
    OFFSET, which degenerates on orderings such as `-paper_count` where millions of rows tie.
    Here the cursor carries every ordering value of the last row, so each page is one indexed
    range scan, at any depth. Views set `ordering` to a tuple that ends with a unique field and
    whose fields are never NULL in the queryset.
    """

    page_size = 20
    max_page_size = 100
    cursor_query_param = "cursor"
    page_size_query_param = "page_size"

    def get_page_size(self, request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            size = int(raw)
        except ValueError:
            size = 0
        if not 1 <= size <= self.max_page_size:
            raise exceptions.ValidationError(
                {self.page_size_query_param: [f"Must be a whole number from 1 to "
                                              f"{self.max_page_size}."]}
            )
        return size

    @staticmethod
    def encode_cursor(values: Sequence[Any], reverse: bool) -> str:
        payload = json.dumps({"v": list(values), "r": int(reverse)}, cls=DjangoJSONEncoder,
                             separators=(",", ":"))
        return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")

    def decode_cursor(self, request, n_fields: int) -> tuple[list[Any], bool] | None:
        raw = request.query_params.get(self.cursor_query_param)
        if not raw:
            return None
        try:
            data = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
            values, reverse = data["v"], bool(data["r"])
            if not isinstance(values, list) or len(values) != n_fields or any(
                not isinstance(v, str | int) or isinstance(v, bool) for v in values
            ):
                raise ValueError("wrong shape")
        except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError):
            # As DRF's CursorPagination does: a cursor we never issued names no page.
            raise exceptions.NotFound(
                "Invalid cursor: use the `next` or `previous` link of a previous response."
            ) from None
        return values, reverse

    @staticmethod
    def _seek(ordering: Sequence[str], values: Sequence[Any], reverse: bool) -> Q:
        """Rows strictly after (or, reversed, before) `values` in `ordering`."""
        condition = Q()
        for i, term in enumerate(ordering):
            field, descending = term.lstrip("-"), term.startswith("-")
            op = "lt" if descending != reverse else "gt"
            step = Q(**{f"{field}__{op}": values[i]})
            for j in range(i):
                step &= Q(**{ordering[j].lstrip("-"): values[j]})
            condition |= step
        # The redundant bound on the first field lets the planner turn this into a range scan.
        first, descending = ordering[0].lstrip("-"), ordering[0].startswith("-")
        bound = Q(**{f"{first}__{'lte' if descending != reverse else 'gte'}": values[0]})
        return bound & condition

    def paginate_queryset(self, queryset: QuerySet, request, view=None) -> list:
        ordering: Sequence[str] = view.get_ordering() if hasattr(view, "get_ordering") else (
            view.ordering)
        self.request = request
        self.ordering = ordering
        self.page_size_value = self.get_page_size(request)
        cursor = self.decode_cursor(request, len(ordering))
        reverse = bool(cursor and cursor[1])
        if cursor:
            queryset = queryset.filter(self._seek(ordering, cursor[0], reverse))
        order = [t[1:] if t.startswith("-") else f"-{t}" for t in ordering] if reverse else (
            list(ordering))
        rows = list(queryset.order_by(*order)[: self.page_size_value + 1])
        has_more = len(rows) > self.page_size_value
        rows = rows[: self.page_size_value]
        if reverse:
            rows.reverse()
        self.has_next = has_more if not reverse else cursor is not None
        self.has_previous = cursor is not None if not reverse else has_more
        self.rows = rows
        return rows

    def _position(self, row) -> list[Any]:
        values = []
        for term in self.ordering:
            value = getattr(row, term.lstrip("-"))
            values.append(value.isoformat() if hasattr(value, "isoformat") else value)
        return values

    def _link(self, row, reverse: bool) -> str:
        url = self.request.build_absolute_uri()
        return replace_query_param(url, self.cursor_query_param,
                                   self.encode_cursor(self._position(row), reverse))

    def get_next_link(self) -> str | None:
        if not self.has_next or not self.rows:
            return None
        return self._link(self.rows[-1], reverse=False)

    def get_previous_link(self) -> str | None:
        if not self.has_previous:
            return None
        if not self.rows:
            return remove_query_param(self.request.build_absolute_uri(), self.cursor_query_param)
        return self._link(self.rows[0], reverse=True)

    def get_paginated_response(self, data) -> Response:
        return Response({"next": self.get_next_link(), "previous": self.get_previous_link(),
                         "results": data})

    def get_paginated_response_schema(self, schema: dict) -> dict:
        return {
            "type": "object",
            "required": ["next", "previous", "results"],
            "properties": {
                "next": {"type": "string", "nullable": True, "format": "uri",
                         "description": "The next page, or null on the last page.",
                         "example": f"{settings.SITE_URL}/api/v1/papers/?cursor=eyJ2Ijpb..."},
                "previous": {"type": "string", "nullable": True, "format": "uri",
                             "description": "The previous page, or null on the first page.",
                             "example": None},
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view) -> list[dict]:
        return [
            {"name": self.cursor_query_param, "in": "query", "required": False,
             "description": "Opaque position from a `next` or `previous` link (404 if it is "
                            "not one of ours).",
             "schema": {"type": "string"}},
            {"name": self.page_size_query_param, "in": "query", "required": False,
             "description": f"Results per page, 1 to {self.max_page_size} "
                            f"(default {self.page_size}).",
             "schema": {"type": "integer", "minimum": 1, "maximum": self.max_page_size,
                        "default": self.page_size}},
        ]


PAGE_SIZE_PARAMETER = OpenApiParameter(
    "page_size", int, description=f"Results per page, 1 to {KeysetPagination.max_page_size} "
                                  f"(default {KeysetPagination.page_size}).",
)


# ---- views --------------------------------------------------------------------------------------

class ConditionalGetMixin:
    """ETag (a digest of the body) on every response and 304 for a matching If-None-Match.

    Django's ConditionalGetMiddleware does the work after the response is rendered; it also
    answers If-Modified-Since when a view sets Last-Modified (detail views do, from modified_at).
    """

    @classmethod
    def as_view(cls, *args, **kwargs):
        return conditional_page(super().as_view(*args, **kwargs))


def permanent_redirect(url: str, request) -> HttpResponsePermanentRedirect:
    """A 301 that keeps the query string (to a merged researcher's survivor, a canonical page
    address, an API URL's trailing slash)."""
    query = request.META.get("QUERY_STRING", "")
    return HttpResponsePermanentRedirect(url + (f"?{query}" if query else ""))


def absolute_api_url(request, name: str, *args: Any) -> str:
    from django.urls import reverse

    path = reverse(name, args=args)
    return request.build_absolute_uri(path) if request is not None else settings.SITE_URL + path


def site_url(path: str) -> str:
    """A page on the site, absolute, from SITE_URL (the canonical host, whatever the request)."""
    return settings.SITE_URL + path


class IdConverter:
    """A database id in a URL: at most 18 digits, so it always fits a 64-bit column."""

    regex = r"[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


class InstitutionKeyConverter:
    """An institution id or a bare ROR id (`042nb2s44`): ROR ids start with a zero, ids never."""

    regex = r"[0-9]{1,18}|0[a-z0-9]{6}[0-9]{2}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value) -> str:
        return str(value)


register_converter(IdConverter, "api_id")
register_converter(InstitutionKeyConverter, "api_institution")
