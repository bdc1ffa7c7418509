"""The reader's next digest, shown before it is mailed: what the digest task would send now."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_GET

from wovepaper.lib.negotiation import render_page
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from . import services
from .digests import digest_preview as digest_compose


@login_required
@require_GET
def digest_preview(request: AuthenticatedHttpRequest) -> HttpResponse:
    profile = services.profile_get_or_create(user=request.user)
    message = digest_compose(user=request.user)
    context = {
        "profile": profile,
        "subject": message.subject if message else "",
        "body": message.body if message else "",
    }
    response = render_page(request, "accounts/digest_preview", context)
    patch_cache_control(response, private=True, no_store=True)
    return response
