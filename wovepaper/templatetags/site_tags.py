from __future__ import annotations

import json

from django import template
from django.template.loader_tags import BLOCK_CONTEXT_KEY
from django.utils.html import format_html, strip_tags
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


@register.simple_tag(takes_context=True)
def reuse_block(context, name: str) -> str:
    """Render block `name` of the page being rendered a second time, tags stripped.

    Django has no `self.<block>` (that is Jinja): this is how the head repeats the title,
    description and canonical path in the Open Graph and Twitter tags. The block was rendered
    with autoescaping, so its text is already escaped and safe to emit.
    """
    block_context = context.render_context.get(BLOCK_CONTEXT_KEY)
    block = block_context.get_block(name) if block_context is not None else None
    if block is None:
        return ""
    with context.push(block=block):
        rendered = block.nodelist.render(context)
    return mark_safe(" ".join(strip_tags(rendered).split()))
