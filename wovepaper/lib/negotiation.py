"""Content negotiation: any page answers in markdown when the client asks for text/markdown.

Each page has an HTML template `<app>/<page>.html` and a markdown template `<app>/<page>.md`
rendered from the same context, so the two never drift apart in what they say.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers


def wants_markdown(request: HttpRequest) -> bool:
    """True when the client prefers text/markdown to text/html, as Django reads Accept
    (quality, then specificity, then the header's order); a browser's */* stays on HTML."""
    if "text/markdown" not in request.headers.get("Accept", ""):
        return False
    return request.get_preferred_type(["text/html", "text/markdown"]) == "text/markdown"


def wants_htmx_fragment(request: HttpRequest) -> bool:
    """True when htmx asks for a fragment to swap in: `HX-Request: true`, except a history
    restore (`HX-History-Restore-Request: true`), which wants the whole page. Read as django-htmx
    reads the headers (only the value "true" counts), so the page cache keys on exactly what
    the view renders."""
    htmx = getattr(request, "htmx", None)
    return htmx is not None and bool(htmx) and not htmx.history_restore_request


def render_page(
    request: HttpRequest, template: str, context: dict, *, status: int = 200
) -> HttpResponse:
    """Render `template` (without extension) as HTML, or as markdown when asked for."""
    if wants_markdown(request):
        response = render(
            request,
            f"{template}.md",
            context,
            content_type="text/markdown; charset=utf-8",
            status=status,
        )
    else:
        response = render(request, f"{template}.html", context, status=status)
    patch_vary_headers(response, ["Accept"])
    return response
