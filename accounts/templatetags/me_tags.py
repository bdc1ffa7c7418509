"""A signed-in reader's own parts of a page (accounts.reader_state: the state their browser
keeps, applied by reader.js): `{% me_loader %}` at the end of the body, `{% me_noscript %}`
where a hint can be read."""

from __future__ import annotations

from django import template
from django.template.loader import render_to_string

from wovepaper.lib.pagecache import rendering_shared_signed_in_page

register = template.Library()


@register.simple_tag(takes_context=True)
def me_loader(context) -> str:
    """At the end of the body. On the body every signed-in reader shares: reader.js, the chat
    dock (its token filled in by reader.js) and where the reader's state is. On a page rendered
    for one signed-in reader, everything is theirs already but its paper list items' save slots
    (the same cached HTML for everyone), which reader.js fills from the same state."""
    request = context.get("request")
    if request is None:
        return ""
    if rendering_shared_signed_in_page(request):
        chat_scope = context.get("chat_scope") or ""
        return render_to_string("accounts/fragments/loader.html", {"chat_scope": chat_scope})
    # The not-found page of a path refused before authentication has no user on its request.
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return render_to_string("accounts/fragments/saves_loader.html")
    return ""


@register.simple_tag(takes_context=True)
def me_noscript(context) -> str:
    request = context.get("request")
    if request is None or not rendering_shared_signed_in_page(request):
        return ""
    return render_to_string("accounts/fragments/noscript.html")
