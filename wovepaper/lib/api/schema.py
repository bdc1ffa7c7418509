"""OpenAPI helpers: the documented error responses, the 429 every operation can answer, and
the query-text field the schema declares."""

from __future__ import annotations

import re
from typing import Protocol

from django.core.validators import ProhibitNullCharactersValidator, RegexValidator
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse
from rest_framework import exceptions, serializers

from .converters import InstitutionKeyConverter
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


# What gunicorn answers, before any view, for a request line past its limit_request_line (its
# default, which deploy/gunicorn.conf.py keeps): any operation can get it, as plain text.
_URI_TOO_LONG = {
    "description": (
        "The request line (method, path and query) is longer than the server reads "
        "(gunicorn's `limit_request_line`, 4,094 bytes): the server's own plain-text answer, "
        "before the API sees the request."
    ),
    "content": {"text/plain": {"schema": {"type": "string"}}},
}
_BLANK_STRING = {"type": "string", "maxLength": 0}


def schema_add_server_responses(result: dict, generator, request, public) -> dict:
    """drf-spectacular hook: the 414 the server in front of every operation can answer."""
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            operation.setdefault("responses", {}).setdefault("414", _URI_TOO_LONG)
    return result


def schema_blank_strings_any_of(result: dict, generator, request, public) -> dict:
    """drf-spectacular hook: a string field that may be blank is written `oneOf` [the field,
    a string of length 0]; "" matches both, so `oneOf` refused what the API accepts. `anyOf`
    says what the API does."""

    def walk(node) -> None:
        if isinstance(node, dict):
            choices = node.get("oneOf")
            if isinstance(choices, list) and _BLANK_STRING in choices:
                node["anyOf"] = node.pop("oneOf")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(result)
    return result


def schema_public_reads_without_padlock(result: dict, generator, request, public) -> dict:
    """drf-spectacular hook: an operation anyone may call (its security lists `{}`, no
    credentials) says it needs none, `security: []`, so the reference draws no padlock on it.
    A signed-in reader's session or token still counts their requests against their own
    rate, as the operation's description and /developers say."""
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            if isinstance(operation, dict) and {} in operation.get("security", []):
                operation["security"] = []
    return result


# No NUL anywhere in text: PostgreSQL cannot store or compare it, and the site refuses it with a
# 400 in any query parameter, form field or JSON body before a view sees it
# (wovepaper.middleware). As a field's validator, the schema says so too (its `pattern`), so
# that no client takes such text for valid.
NUL_REFUSED = "Text may not contain NUL characters (U+0000)."
NO_NUL = RegexValidator(r"^[^\x00]*$", NUL_REFUSED)


class QueryTextField(serializers.CharField):
    """Free text from a query string, at least one character: spaces alone are allowed (they
    match nothing); NUL is refused (`NO_NUL`)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)
        # One NUL rule, whose pattern the schema shows, in place of DRF's own check.
        self.validators = [
            v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)
        ] + [NO_NUL]

    def to_internal_value(self, data) -> str:
        # The schema's maxLength bounds the text as sent: measured before the surrounding
        # spaces go, or a long query padded with spaces slipped past it.
        if self.max_length is not None and isinstance(data, str) and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data).strip()


def query_values(request, serializer_class: type[serializers.Serializer]) -> dict[str, str]:
    """The query parameters a parameters serializer declares, as plain values.

    Given the QueryDict itself, DRF reads it as an HTML form: an empty value of an optional field
    (`country=`, `published_from=`) counted as absent and a repeated one as its last value, so
    what the schema calls invalid answered 200. Here an empty value is validated like any other
    and a repeated parameter is a 400.
    """
    values: dict[str, str] = {}
    repeated: dict[str, list[str]] = {}
    for name in serializer_class().get_fields():
        given = request.query_params.getlist(name)
        if len(given) > 1:
            repeated[name] = ["Give this parameter once."]
        elif given:
            values[name] = given[0]
    if repeated:
        raise exceptions.ValidationError(repeated)
    return values


def query_params(request, serializer_class: type[serializers.Serializer]) -> dict:
    """The query parameters `serializer_class` declares, validated (a 400 when they are not)."""
    params = serializer_class(data=query_values(request, serializer_class))
    params.is_valid(raise_exception=True)
    return params.validated_data


def body_values(request, serializer_class: type[serializers.Serializer]) -> dict:
    """The request body as `serializer_class` reads it, validated (a 400 when it is not)."""
    payload = serializer_class(data=request.data)
    payload.is_valid(raise_exception=True)
    return payload.validated_data


WHOLE_NUMBER = re.compile(r"-?[0-9]+")


class QueryIntegerField(serializers.IntegerField):
    """An integer in a query string written as the schema's `integer`: digits only (DRF's own
    field also took `3.0`, ` 3` and `3_000`)."""

    def to_internal_value(self, data) -> int:
        if isinstance(data, str) and not WHOLE_NUMBER.fullmatch(data):
            self.fail("invalid")
        return super().to_internal_value(data)


class JSONIntegerField(serializers.IntegerField):
    """An integer in a JSON body, as the schema's `integer` means it (JSON Schema 2020-12, which
    OpenAPI 3.1 uses: a number with no fractional part, so `7` and `7.0`). DRF's own field also
    took `"7"` and `true`, which it does not allow."""

    def to_internal_value(self, data) -> int:
        if isinstance(data, float) and data.is_integer():
            data = int(data)
        if not isinstance(data, int) or isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class JSONStringField(serializers.CharField):
    """Text in a JSON body: a JSON string only (DRF's own field also took `0` and `1.5` and
    stored them as text, which the schema's `string` does not allow)."""

    default_error_messages = {"invalid": "Must be a string."}

    def to_internal_value(self, data) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        # The schema's maxLength bounds the text as sent: DRF measures it after trimming, so
        # 301 characters with a space in front passed a limit of 300 (schemathesis found it).
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)


class _Converter(Protocol):
    regex: str


def converter_path_parameter(
    name: str, converter: type[_Converter], *, description: str, examples: dict[str, str]
) -> OpenApiParameter:
    """A path parameter whose schema is the URL converter's own pattern: the schema admits
    exactly the values the route does."""
    return OpenApiParameter(
        name,
        {"type": "string", "pattern": f"^(?:{converter.regex})$"},
        OpenApiParameter.PATH,
        description=description,
        examples=[OpenApiExample(label, value=value) for label, value in examples.items()],
    )


# The `<api_institution:key>` of institution routes (institutions' own and the researchers at
# one, which the researchers app serves).
INSTITUTION_KEY = converter_path_parameter(
    "key",
    InstitutionKeyConverter,
    description="An institution id (as in `/institutions/<id>-<slug>`) or its bare ROR id.",
    examples={"id": "1", "ROR id": "042nb2s44"},
)


def page_number_parameters(things: str, *, page_size: int, max_page_size: int) -> list:
    """`page` and `page_size` of a page-numbered list (the account's follows and conversations);
    `things` names what a page holds."""
    return [
        OpenApiParameter(
            "page",
            {"type": "integer", "minimum": 1},
            description="Page number, from 1 (404 past the last page).",
        ),
        OpenApiParameter(
            "page_size",
            {"type": "integer", "minimum": 1, "maximum": max_page_size},
            description=f"{things.capitalize()} per page, 1 to {max_page_size} "
            f"(default {page_size}).",
        ),
    ]
