from __future__ import annotations

import json

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

register = template.Library()

_JSON_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


@register.filter
def jsonld(data: dict) -> str:
    """A <script type="application/ld+json"> block; user text cannot close the script tag."""
    payload = json.dumps(data, ensure_ascii=False, default=str).translate(_JSON_ESCAPES)
    return format_html('<script type="application/ld+json">{}</script>', mark_safe(payload))


@register.filter
def md_escape(value: object) -> str:
    """Escape markdown control characters in user text for the markdown page variants."""
    text = str(value or "")
    for ch in "\\`*_[]<>#|":
        text = text.replace(ch, "\\" + ch)
    return text
