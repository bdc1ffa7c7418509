"""Pages for programs and the people who write them: /developers, /llms.txt, /robots.txt, and
the open bulk files under /data/."""

from __future__ import annotations

from csp.decorators import csp_update
from django.conf import settings
from django.contrib.staticfiles.storage import staticfiles_storage
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
)
from django.shortcuts import render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.http import require_safe
from drf_spectacular.views import SpectacularSwaggerSplitView

from researchers.identity_links import FILE_NAME, META_NAME, export_dir
from wovepaper.features import FEATURES
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
        "features": FEATURES,
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


def favicon(request: HttpRequest) -> HttpResponse:
    """Where a browser looks for an icon when a page names none (the admin's, the feeds'): the
    site's own icon, which its pages name in <head>."""
    return HttpResponsePermanentRedirect(staticfiles_storage.url("img/favicon.svg"))


# What the API reference page adds to the site's Content-Security-Policy: Swagger UI writes its
# styles into <style> elements at run time. Scripts stay our own files only (no inline script,
# no eval). Redoc is not served: its bundle always shows a "powered by" image from its makers'
# CDN, which the policy (rightly) refuses; /developers/redoc leads to this reference.
API_REFERENCE_CSP = {"style-src": ["'unsafe-inline'"]}


@method_decorator(csp_update(API_REFERENCE_CSP), name="dispatch")
class SwaggerView(SpectacularSwaggerSplitView):
    """Swagger UI from our static files, its start-up script served as a file of its own (the
    split view) rather than inline, so script-src stays 'self'."""


def redoc_moved(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """The readable reference that was Redoc is the Swagger UI reference now."""
    return HttpResponsePermanentRedirect(reverse("api-reference"))


@require_safe
def identity_links(request: HttpRequest, name: str) -> FileResponse:
    """The open bulk file of identity links and its sidecar, as last written by the daily
    export (404 until the first export has run)."""
    if name not in (FILE_NAME, META_NAME):
        raise Http404("no such data file")
    path = export_dir() / name
    if not path.is_file():
        raise Http404("the identity-links file has not been generated yet")
    response = FileResponse(
        path.open("rb"),
        as_attachment=name == FILE_NAME,
        filename=name,
        content_type="application/gzip" if name == FILE_NAME else "application/json",
    )
    response["Cache-Control"] = "public, max-age=3600"
    return response
