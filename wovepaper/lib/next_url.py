"""Where a form sends the reader back to: its `next`, when that is a page of this site."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme


def next_url_or(request: HttpRequest, fallback: str) -> str:
    """The request's `next` (POST, then GET) when it stays on this host, else `fallback`: a
    `next` pointing elsewhere would make the site an open redirect."""
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return fallback
