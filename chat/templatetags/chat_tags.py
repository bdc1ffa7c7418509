from __future__ import annotations

import re

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_CITE = re.compile(r"\[(\d+)\]")


@register.filter
def cited_text(content: str, citations: list | None) -> SafeString:
    """The answer's text, escaped, its line breaks kept, and each [n] of a cited source a link
    to that paper's page; an [n] that names no citation stays text."""
    urls = {str(c.get("number")): c.get("url") for c in citations or [] if c.get("url")}

    def link(match: re.Match) -> str:
        number = match.group(1)
        if number not in urls:
            return match.group(0)
        # The text around it is already escaped: the link is built from escaped parts.
        return format_html('<a href="{}" class="chat-cite">[{}]</a>', urls[number], number)

    # Escaped first (an answer quotes abstracts, which hold markup); "[", "]" and digits pass
    # through escaping unchanged.
    escaped = str(escape(content or ""))
    linked = _CITE.sub(link, escaped)
    return mark_safe("<br>".join(linked.splitlines()))  # noqa: S308  (escaped above)
