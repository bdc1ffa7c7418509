"""`{% load library_tags %}{% save_button paper %}`: a paper's save control, on the paper page."""

from __future__ import annotations

from django import template
from django.contrib.auth.models import AnonymousUser

from papers.models import Paper

from ..library.lists import save_controls

register = template.Library()


@register.inclusion_tag("accounts/library/_save_button.html", takes_context=True)
def save_button(context, paper: Paper) -> dict:
    """On the page every signed-in reader shares it shows the signed-out control, which
    reader.js makes the reader's; rendered for one reader, it shows theirs (two queries)."""
    request = context.get("request")
    user = getattr(request, "user", None) or AnonymousUser()
    next_url = request.get_full_path() if request is not None else paper.get_absolute_url()
    (control,) = save_controls(user=user, papers=[paper], next_url=next_url)
    return {
        "control": control,
        "csrf_token": context.get("csrf_token"),
        # On the page every signed-in reader shares, reader.js makes the control the reader's.
        "reader_shared": bool(context.get("reader_shared")),
    }
