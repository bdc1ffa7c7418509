"""The reader's next digest, shown before it is mailed (what the digest task would send now), and
the unsubscribe link every digest carries."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_cache_control
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from wovepaper.lib.negotiation import render_page
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from . import digests, profiles
from .digests import digest_preview as digest_compose


@login_required
@require_GET
def digest_preview(request: AuthenticatedHttpRequest) -> HttpResponse:
    profile = profiles.profile_get_or_create(user=request.user)
    message = digest_compose(user=request.user)
    context = {
        "profile": profile,
        "subject": message.subject if message else "",
        "body": message.body if message else "",
    }
    response = render_page(request, "accounts/digest_preview", context)
    patch_cache_control(response, private=True, no_store=True)
    return response


# The token in the link is the authorisation, and mail clients that implement RFC 8058
# one-click unsubscribe POST to it without any cookie or CSRF token. A GET only asks: mail
# systems' link scanners follow every link in a message, and must not unsubscribe anyone.
@csrf_exempt
@require_http_methods(["GET", "POST"])
def digest_unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    if request.method == "GET":
        result = digests.unsubscribe_token_check(token=token)
        context = {"result": result, "confirm": result.ok}
        return render(
            request, "accounts/unsubscribe.html", context, status=200 if result.ok else 400
        )
    result = digests.digest_unsubscribe(token=token)
    if result.ok and request.POST.get("List-Unsubscribe") == "One-Click":
        return HttpResponse("Unsubscribed.", content_type="text/plain")
    status = 200 if result.ok else 400
    return render(request, "accounts/unsubscribe.html", {"result": result}, status=status)
