"""`{% load follow_tags %}{% follow_button researcher %}` (or an institution): the follow button
with its count."""

from __future__ import annotations

from django import template

from institutions.models import Institution
from researchers.models import Researcher

from ..follows import follow_button_context

register = template.Library()


@register.inclusion_tag("accounts/_follow_button.html", takes_context=True)
def follow_button(context, record: Researcher | Institution) -> dict:
    """`{% follow_button researcher %}` or `{% follow_button institution %}`. On the page every
    signed-in reader shares it shows the anonymous button, which reader.js makes the reader's."""
    ctx = follow_button_context(context.get("request"), record)
    ctx["csrf_token"] = context.get("csrf_token")
    ctx["reader_shared"] = _shared(context)
    return ctx


@register.inclusion_tag("accounts/_claim_button.html", takes_context=True)
def claim_button(context, researcher: Researcher) -> dict:
    """ "This is me" on a researcher page; a sign-in prompt for signed-out visitors."""
    request = context.get("request")
    user = getattr(request, "user", None)
    signed_in = bool(user is not None and user.is_authenticated)
    claim = None
    if signed_in and user is not None:
        claim = user.claims.filter(researcher_id=researcher.pk).first()
    return {
        "researcher": researcher,
        "signed_in": signed_in,
        "claim": claim,
        "next_url": request.get_full_path() if request else researcher.get_absolute_url(),
        "csrf_token": context.get("csrf_token"),
        "reader_shared": _shared(context),
    }


def _shared(context) -> bool:
    """On the page every signed-in reader shares, reader.js makes each button the reader's
    (`reader_shared`: accounts.context_processors.onboarding)."""
    return bool(context.get("reader_shared"))
