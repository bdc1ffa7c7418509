from __future__ import annotations

from urllib.parse import quote

from django import template
from django.utils.safestring import SafeString

from papers import mathtext
from papers.taxonomy import category_name as _category_name

register = template.Library()


@register.filter
def category_name(code: str) -> str:
    """cs.LG → Machine Learning; unknown codes read as themselves."""
    return _category_name(str(code or ""))


@register.filter
def category_url(code: str) -> str:
    """Where a category label leads: the field's page."""
    return f"/categories/{quote(str(code or ''), safe='.-')}"


@register.filter
def tex(text: str) -> SafeString:
    """Title or abstract text, escaped, with its TeX formulas as MathML (papers.mathtext)."""
    return mathtext.tex_html(str(text or ""))


@register.filter
def tex_words(text: str, limit: int) -> SafeString:
    """As `tex`, cut after `limit` words without cutting a formula."""
    return mathtext.tex_html_words(str(text or ""), int(limit))
