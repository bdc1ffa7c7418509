"""Permanent redirects that keep the query string, and absolute URLs for API bodies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.http import HttpResponsePermanentRedirect
from django.urls import reverse


def permanent_redirect(url: str, request) -> HttpResponsePermanentRedirect:
    """A 301 that keeps the query string (to a merged researcher's survivor, a canonical page
    address, an API URL's trailing slash)."""
    query = request.META.get("QUERY_STRING", "")
    return HttpResponsePermanentRedirect(url + (f"?{query}" if query else ""))


def absolute_api_url(request, name: str, *args: Any) -> str:
    path = reverse(name, args=args)
    return request.build_absolute_uri(path) if request is not None else settings.SITE_URL + path


def site_url(path: str) -> str:
    """A page on the site, absolute, from SITE_URL (the canonical host, whatever the request)."""
    return settings.SITE_URL + path


def request_url(context: Mapping[str, Any], path: str) -> str:
    """`path` as an absolute URL on the host the request came to (a serializer's context), or
    the path alone where there is no request."""
    request = context.get("request")
    return request.build_absolute_uri(path) if request is not None else path
