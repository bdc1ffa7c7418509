"""OpenAPI helpers: the documented error responses, the 429 every operation can answer, and
the query-text field the schema declares."""

from __future__ import annotations

from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers

from .errors import _ERROR_DESCRIPTIONS, _ERROR_EXAMPLES, ErrorSerializer, error_body


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    out = {}
    for status in statuses:
        code, message, extra = _ERROR_EXAMPLES[status]
        out[status] = OpenApiResponse(
            ErrorSerializer,
            description=_ERROR_DESCRIPTIONS[status],
            examples=[
                OpenApiExample(
                    code,
                    value=error_body(status, code, message, **extra),
                    response_only=True,
                    status_codes=[str(status)],
                )
            ],
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
                    "headers": {
                        "Retry-After": {
                            "schema": {"type": "integer"},
                            "description": "Seconds to wait before the next request.",
                        }
                    },
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/Error"},
                            "example": error_body(
                                429, *_ERROR_EXAMPLES[429][:2], **_ERROR_EXAMPLES[429][2]
                            ),
                        }
                    },
                }
    return result


class QueryTextField(serializers.CharField):
    """Free text from a query string: NUL characters (which PostgreSQL cannot store or compare)
    are dropped rather than refused, and blank text is allowed (it matches nothing)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)
        self.validators = [
            v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)
        ]

    def to_internal_value(self, data) -> str:
        return super().to_internal_value(data).replace("\x00", "").strip()
