"""Content negotiation: any page answers in markdown when the client asks for text/markdown.

Each page has an HTML template `<app>/<page>.html` and a markdown template `<app>/<page>.md`
rendered from the same context, so the two never drift apart in what they say.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers


def wants_markdown(request: HttpRequest) -> bool:
    """True when text/markdown is acceptable and preferred over text/html (or html is absent)."""
    accept = request.headers.get("Accept", "")
    if "text/markdown" not in accept:
        return False
    preferences = {}
    for item in accept.split(","):
        media, *params = [part.strip() for part in item.split(";")]
        quality = 1.0
        for param in params:
            if param.startswith("q="):
                try:
                    quality = float(param[2:])
                except ValueError:
                    quality = 0.0
        preferences[media] = quality
    markdown = preferences.get("text/markdown", 0)
    return markdown > 0 and markdown >= preferences.get("text/html", 0)


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
