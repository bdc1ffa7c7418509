from __future__ import annotations

from django import template

from papers.taxonomy import category_name as _category_name

register = template.Library()


@register.filter
def category_name(code: str) -> str:
    """cs.LG → Machine Learning; unknown codes read as themselves."""
    return _category_name(str(code or ""))
