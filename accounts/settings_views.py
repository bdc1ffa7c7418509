"""The reader's account page (fields, digest, claims, reports, API token), and taking their data
away: the export and the account's deletion."""

from __future__ import annotations

import json

from allauth.account.decorators import reauthentication_required
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from rest_framework.authtoken.models import Token

from researchers.curation.reports import reports_of_user
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from . import account_data, profiles
from .categories import categories_by_code, category_list
from .forms import DeleteAccountForm, SettingsForm
from .ownership.claims import claims_for_user


@login_required
@require_http_methods(["GET", "POST"])
def account_settings(request: AuthenticatedHttpRequest) -> HttpResponse:
    profile = profiles.profile_get_or_create(user=request.user)
    if request.method == "POST":
        form = SettingsForm(request.POST)
        if form.is_valid():
            profiles.profile_set_fields(profile=profile, fields=form.cleaned_data["fields"])
            profiles.profile_set_digest(
                profile=profile, frequency=form.cleaned_data["digest_frequency"]
            )
            messages.success(request, "Settings saved.")
            return redirect("accounts:settings")
    else:
        form = SettingsForm(
            initial={"fields": profile.fields, "digest_frequency": profile.digest_frequency}
        )
    chosen = categories_by_code(profile.fields)
    chosen_codes = {c.code for c in chosen}
    context = {
        "form": form,
        "profile": profile,
        "chosen": chosen,
        "categories": [c for c in category_list() if c.code not in chosen_codes],
        "follow_count": request.user.follows.count(),
        "claims": list(claims_for_user(user=request.user)),
        "reports": reports_of_user(request.user),
        "token": Token.objects.filter(user=request.user).first(),
    }
    return render(request, "accounts/settings.html", context)


@login_required
@require_POST
def api_token(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Create (or replace) the user's API token; the old one stops working."""
    Token.objects.filter(user=request.user).delete()
    Token.objects.create(user=request.user)
    messages.success(request, "A new API token was created. The previous one no longer works.")
    return redirect(reverse("accounts:settings") + "#api")


@login_required
@require_GET
def export(request: AuthenticatedHttpRequest) -> HttpResponse:
    data = account_data.user_export(user=request.user)
    response = HttpResponse(
        json.dumps(data, indent=2, ensure_ascii=False),
        content_type="application/json; charset=utf-8",
    )
    stamp = timezone.now().strftime("%Y%m%d")
    response["Content-Disposition"] = f'attachment; filename="wovepaper-account-{stamp}.json"'
    response["Cache-Control"] = "no-store"
    return response


@login_required
# The typed phrase guards against a slip, not against someone at an unlocked session: deleting
# also asks for the password again (allauth's reauthentication, valid for
# ACCOUNT_REAUTHENTICATION_TIMEOUT, 5 minutes; an account without a password gets a code by email).
@reauthentication_required
@require_http_methods(["GET", "POST"])
def delete_account(request: AuthenticatedHttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = DeleteAccountForm(request.POST)
        if form.is_valid():
            user = request.user
            logout(request)
            account_data.user_delete(user=user)
            messages.success(request, "Your account and everything in it were deleted.")
            return redirect("/")
    else:
        form = DeleteAccountForm()
    return render(request, "accounts/delete.html", {"form": form})
