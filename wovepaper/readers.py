"""Pages for programs and the people who write them: /developers, /llms.txt, /robots.txt."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe
from drf_spectacular.views import SpectacularRedocView

from wovepaper.lib.api.pagination import KeysetPagination
from wovepaper.lib.negotiation import render_page

_PERIODS = {"s": "second", "m": "minute", "h": "hour", "d": "day"}


def rate_in_words(rate: str | None) -> str:
    """Turn "60/minute" into "60 requests a minute", and None into "no limit"."""
    if not rate:
        return "no limit"
    count, _, period = rate.partition("/")
    return f"{count} requests a {_PERIODS.get(period[:1], period)}"


def _context() -> dict:
    rates = settings.API_THROTTLE_RATES
    return {
        "api_base": f"{settings.SITE_URL}/api/v1",
        "anon_rate": rate_in_words(rates.get("anon")),
        "user_rate": rate_in_words(rates.get("user")),
        "page_size_max": KeysetPagination.max_page_size,
    }


@require_safe
def developers(request: HttpRequest) -> HttpResponse:
    return render_page(request, "wovepaper/developers", _context())


@require_safe
def llms_txt(request: HttpRequest) -> HttpResponse:
    return render(
        request, "wovepaper/llms.txt", _context(), content_type="text/plain; charset=utf-8"
    )


@require_safe
def robots_txt(request: HttpRequest) -> HttpResponse:
    return render(request, "wovepaper/robots.txt", {}, content_type="text/plain; charset=utf-8")


class RedocView(SpectacularRedocView):
    """Redoc from our static files; the template leaves out drf-spectacular's Google Fonts."""

    template_name = "wovepaper/redoc.html"
