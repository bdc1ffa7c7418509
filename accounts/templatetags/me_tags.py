"""The loader of a signed-in reader's own parts on a shared public page (accounts.fragments):
`{% me_loader %}` at the end of the body, `{% me_noscript %}` where a hint can be read. Both
render nothing except on the body every signed-in reader shares, but for the save controls of a
page's paper list items, which a page rendered for one signed-in reader asks for too."""

from __future__ import annotations

from django import template
from django.template.loader import render_to_string

from wovepaper.lib.negotiation import wants_htmx_fragment
from wovepaper.lib.pagecache import rendering_shared_signed_in_page

from ..fragments import loader_url, papers_noted

register = template.Library()


@register.simple_tag(takes_context=True)
def me_loader(context) -> str:
    """After the page's content, so that every part the page holds has noted itself."""
    request = context.get("request")
    if request is None:
        return ""
    if rendering_shared_signed_in_page(request):
        url = loader_url(request, chat_scope=context.get("chat_scope") or "")
        return render_to_string("accounts/fragments/loader.html", {"url": url})
    # The not-found page of a path refused before authentication has no user on its request.
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated and papers_noted(request):
        # A page rendered for this reader alone: everything on it is theirs but the save
        # slots of its list items, which are the same cached HTML for everyone.
        url = loader_url(request, saves_only=True)
        return render_to_string("accounts/fragments/saves_loader.html", {"url": url})
    return ""


@register.simple_tag(takes_context=True)
def me_noscript(context) -> str:
    request = context.get("request")
    if request is None or not rendering_shared_signed_in_page(request):
        return ""
    return render_to_string("accounts/fragments/noscript.html")


@register.simple_tag(takes_context=True)
def me_saves_loader(context) -> str:
    """At the end of an htmx fragment that lists papers (search results swapped in place): the
    page's own loader ran when the page loaded, so the fragment asks for its items' controls."""
    request = context.get("request")
    if request is None or not wants_htmx_fragment(request) or not papers_noted(request):
        return ""
    if not (rendering_shared_signed_in_page(request) or request.user.is_authenticated):
        return ""
    url = loader_url(request, saves_only=True)
    return render_to_string("accounts/fragments/saves_loader.html", {"url": url})
