"""Keyset (seek) pagination over the whole ordering tuple."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core import signing
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Q, QuerySet
from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import BasePagination, PageNumberPagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from ..bounds import whole_number
from .schema import page_number_parameters

INVALID_CURSOR = "Not a cursor of this list: use the `next` or `previous` link of a response."


def page_size_from(request, name: str, default: int, maximum: int) -> int:
    """The page size asked for, checked as the schema states it: digits only, 1 to `maximum`,
    given once. Anything else is a 400 (never silently the default)."""
    given = request.query_params.getlist(name)
    if not given:
        return default
    size = whole_number(given[0], minimum=1, maximum=maximum) if len(given) == 1 else None
    if size is None:
        raise exceptions.ValidationError({name: [f"Must be a whole number from 1 to {maximum}."]})
    return size


class _CursorSerializer:
    """Compact JSON (dates as ISO text) for the signed cursor payload."""

    def dumps(self, obj: Any) -> bytes:
        return json.dumps(obj, cls=DjangoJSONEncoder, separators=(",", ":")).encode()

    def loads(self, data: bytes) -> Any:
        return json.loads(data.decode())


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
        return page_size_from(
            request, self.page_size_query_param, self.page_size, self.max_page_size
        )

    def _cursor_salt(self) -> str:
        # The ordering is in the salt: a cursor from one list (another ordering, other value
        # types) is refused by another instead of reaching the query with the wrong types.
        return "wovepaper.api.cursor:" + ",".join(self.ordering)

    def encode_cursor(self, values: Sequence[Any], reverse: bool) -> str:
        return signing.dumps(
            {"v": list(values), "r": int(reverse)},
            salt=self._cursor_salt(),
            serializer=_CursorSerializer,
        )

    def decode_cursor(self, request, n_fields: int) -> tuple[list[Any], bool] | None:
        """The position in a cursor we issued. Cursors are signed: a forged, altered or foreign
        one (base64 of any JSON, say) is a 400 before its values can reach a query."""
        raw = request.query_params.get(self.cursor_query_param)
        if not raw:
            return None
        try:
            data = signing.loads(raw, salt=self._cursor_salt(), serializer=_CursorSerializer)
            values, reverse = data["v"], bool(data["r"])
            if not isinstance(values, list) or len(values) != n_fields:
                raise ValueError("wrong shape")
        except (signing.BadSignature, ValueError, TypeError, KeyError):
            raise exceptions.ValidationError({self.cursor_query_param: [INVALID_CURSOR]}) from None
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

    # Narrower than DRF's (which also pages sequences): keyset paging filters a queryset.
    def paginate_queryset(self, queryset: QuerySet, request, view=None) -> list:  # type: ignore[override]
        ordering: Sequence[str] = (
            view.get_ordering() if hasattr(view, "get_ordering") else (view.ordering)
        )
        self.request = request
        self.ordering = ordering
        self.page_size_value = self.get_page_size(request)
        cursor = self.decode_cursor(request, len(ordering))
        reverse = bool(cursor and cursor[1])
        if cursor:
            queryset = queryset.filter(self._seek(ordering, cursor[0], reverse))
        order = (
            [t[1:] if t.startswith("-") else f"-{t}" for t in ordering]
            if reverse
            else (list(ordering))
        )
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
        return replace_query_param(
            url, self.cursor_query_param, self.encode_cursor(self._position(row), reverse)
        )

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
        return Response(
            {"next": self.get_next_link(), "previous": self.get_previous_link(), "results": data}
        )

    def get_paginated_response_schema(self, schema: dict) -> dict:
        return {
            "type": "object",
            "required": ["next", "previous", "results"],
            "properties": {
                # OpenAPI 3.1: null is a type of its own (3.0's `nullable` is gone).
                "next": {
                    "type": ["string", "null"],
                    "format": "uri",
                    "description": "The next page, or null on the last page.",
                    "example": f"{settings.SITE_URL}/api/v1/papers/?cursor=eyJ2Ijpb...",
                },
                "previous": {
                    "type": ["string", "null"],
                    "format": "uri",
                    "description": "The previous page, or null on the first page.",
                    "example": None,
                },
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view) -> list[dict]:
        return [
            {
                "name": self.cursor_query_param,
                "in": "query",
                "required": False,
                "description": "Opaque position from a `next` or `previous` link of the same "
                "list (400 if it is not one).",
                "schema": {"type": "string"},
            },
            {
                "name": self.page_size_query_param,
                "in": "query",
                "required": False,
                "description": f"Results per page, 1 to {self.max_page_size} "
                f"(default {self.page_size}).",
                "schema": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": self.max_page_size,
                    "default": self.page_size,
                },
            },
        ]


PAGE_SIZE_PARAMETER = OpenApiParameter(
    "page_size",
    int,
    description=f"Results per page, 1 to {KeysetPagination.max_page_size} "
    f"(default {KeysetPagination.page_size}).",
)


class NumberedPagination(PageNumberPagination):
    """Page-number pagination for a signed-in reader's lists and the chat's: 50 a page, up to
    200, every parameter checked as the schema states it."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def get_page_size(self, request) -> int:
        # DRF's falls back to the default for a page size it cannot read; the schema says 400.
        return page_size_from(
            request, self.page_size_query_param, self.page_size, self.max_page_size
        )

    def get_page_number(self, request, paginator) -> str:
        # DRF reads an empty `page` as page 1 and "last" as the last page; the schema says a
        # whole number from 1, so anything else is a 400.
        given = request.query_params.getlist(self.page_query_param)
        if not given:
            return "1"
        if len(given) != 1 or not (given[0].isascii() and given[0].isdigit()) or given[0] == "0":
            raise ValidationError({self.page_query_param: ["Must be a whole number from 1."]})
        return given[0]


def numbered_page_parameters(things: str) -> list[OpenApiParameter]:
    return page_number_parameters(
        things,
        page_size=NumberedPagination.page_size,
        max_page_size=NumberedPagination.max_page_size,
    )


# One page of a list NumberedPagination pages (PageNumberPagination's shape), for the schema.
# A list's own page declares `count`, whose help says what is counted, and `results`. A
# comment, not a docstring: the schema would give it to every page.
class NumberedPageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="The next page, or null.")
    previous = serializers.URLField(allow_null=True, help_text="The previous page, or null.")

    def get_fields(self):
        # DRF puts a base class's fields first; the page reads in the order it is sent.
        fields = super().get_fields()
        return {name: fields[name] for name in ("count", "next", "previous", "results")}
