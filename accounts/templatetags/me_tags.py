"""The loader of a signed-in reader's own parts on a shared public page (accounts.fragments):
`{% me_loader %}` at the end of the body, `{% me_noscript %}` where a hint can be read. Both
render nothing except on the body every signed-in reader shares."""

from __future__ import annotations

from django import template
from django.template.loader import render_to_string

from wovepaper.lib.pagecache import rendering_shared_signed_in_page

from ..fragments import loader_url

register = template.Library()


@register.simple_tag(takes_context=True)
def me_loader(context) -> str:
    """After the page's content, so that every part the page holds has noted itself."""
    request = context.get("request")
    if request is None or not rendering_shared_signed_in_page(request):
        return ""
    url = loader_url(request, chat_scope=context.get("chat_scope") or "")
    return render_to_string("accounts/fragments/loader.html", {"url": url})


@register.simple_tag(takes_context=True)
def me_noscript(context) -> str:
    request = context.get("request")
    if request is None or not rendering_shared_signed_in_page(request):
        return ""
    return render_to_string("accounts/fragments/noscript.html")
