"""The setup steps a new reader is offered: fields, researchers to follow, their own page and the
digest."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from researchers.name_search import researchers_search
from wovepaper.lib.next_url import next_url_or
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from . import follows, profiles

# As `steps`: the first view below is called `onboarding`, after its URL.
from . import onboarding as steps
from .categories import categories_by_code, categories_search
from .forms import FieldsForm
from .models import Profile
from .ownership.claims import claims_for_user

STEP_URLS: dict[str, str] = {
    Profile.Step.FIELDS: "accounts:onboarding_fields",
    Profile.Step.RESEARCHERS: "accounts:onboarding_researchers",
    Profile.Step.CLAIM: "accounts:onboarding_claim",
}
STEP_ORDER: list[str] = [Profile.Step.FIELDS, Profile.Step.RESEARCHERS, Profile.Step.CLAIM]


@login_required
@require_GET
def onboarding(request: AuthenticatedHttpRequest) -> HttpResponse:
    profile = profiles.profile_get_or_create(user=request.user)
    steps.onboarding_resume(profile=profile)
    return redirect(STEP_URLS.get(profile.onboarding_step, STEP_URLS[Profile.Step.FIELDS]))


def _step_context(step: str) -> dict:
    return {
        "steps": [(s, Profile.Step(s).label, STEP_URLS[s]) for s in STEP_ORDER],
        "current_step": step,
        "step_number": STEP_ORDER.index(step) + 1,
        "step_total": len(STEP_ORDER),
    }


@login_required
@require_http_methods(["GET", "POST"])
def onboarding_fields(request: AuthenticatedHttpRequest) -> HttpResponse:
    profile = profiles.profile_get_or_create(user=request.user)
    if request.method == "POST":
        form = FieldsForm(request.POST)
        if form.is_valid():
            profiles.profile_set_fields(profile=profile, fields=form.cleaned_data["fields"])
            steps.onboarding_advance(profile=profile, step=Profile.Step.RESEARCHERS)
            return redirect("accounts:onboarding_researchers")
    else:
        form = FieldsForm()
    query = request.GET.get("q", "")
    # Boxes ticked but not saved yet come back with a live search, so searching again keeps them.
    if request.method == "POST":
        ticked = request.POST.getlist("fields")
    else:
        ticked = profile.fields + request.GET.getlist("fields")
    chosen = categories_by_code(ticked)
    chosen_codes = {c.code for c in chosen}
    context = {
        "form": form,
        "query": query,
        "chosen": chosen,
        "results": [c for c in categories_search(query) if c.code not in chosen_codes],
        **_step_context(Profile.Step.FIELDS),
    }
    if request.htmx and request.htmx.target == "category-picker":
        return render(request, "accounts/onboarding/_category_results.html", context)
    return render(request, "accounts/onboarding/fields.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def onboarding_researchers(request: AuthenticatedHttpRequest) -> HttpResponse:
    profile = profiles.profile_get_or_create(user=request.user)
    if request.method == "POST":
        steps.onboarding_advance(profile=profile, step=Profile.Step.CLAIM)
        return redirect("accounts:onboarding_claim")
    query = request.GET.get("q", "").strip()
    results = researchers_search(query).items if query else []
    suggested = (
        []
        if query
        else steps.researchers_suggested(
            fields=profile.fields, exclude_ids=follows.followed_researcher_ids(user=request.user)
        )
    )
    follows.researchers_with_follow_state(results + suggested, user=request.user)
    context = {
        "query": query,
        "results": results,
        "suggested": suggested,
        "fields": profile.fields,
        **_step_context(Profile.Step.RESEARCHERS),
    }
    if request.htmx and request.htmx.target == "researcher-results":
        return render(request, "accounts/onboarding/_researcher_results.html", context)
    return render(request, "accounts/onboarding/researchers.html", context)


@login_required
@require_GET
def onboarding_claim(request: AuthenticatedHttpRequest) -> HttpResponse:
    query = request.GET.get("q", "").strip()
    results = researchers_search(query).items if query else []
    claims = list(claims_for_user(user=request.user)[:10])
    profile = profiles.profile_get_or_create(user=request.user)
    # Weekly is offered first to someone who has not chosen yet; they see it before finishing.
    digest = (
        profile.digest_frequency
        if profile.digest_frequency != Profile.Digest.NONE or profile.last_digest_at
        else Profile.Digest.WEEKLY
    )
    context = {
        "query": query,
        "results": results,
        "claims": claims,
        "claimed_ids": {c.researcher_id for c in claims},
        "digest_choices": Profile.Digest.choices,
        "digest": digest,
        **_step_context(Profile.Step.CLAIM),
    }
    return render(request, "accounts/onboarding/claim.html", context)


@login_required
@require_POST
def onboarding_skip(request: AuthenticatedHttpRequest) -> HttpResponse:
    profile = profiles.profile_get_or_create(user=request.user)
    steps.onboarding_skip(profile=profile)
    messages.info(request, "Setup skipped. You can finish it any time from your account page.")
    return redirect(next_url_or(request, "/"))


@login_required
@require_POST
def onboarding_finish(request: AuthenticatedHttpRequest) -> HttpResponse:
    profile = profiles.profile_get_or_create(user=request.user)
    frequency = request.POST.get("digest_frequency")
    if frequency in Profile.Digest.values:
        profiles.profile_set_digest(profile=profile, frequency=frequency)
    steps.onboarding_complete(profile=profile)
    messages.success(request, "You're all set. New papers by the researchers you follow show here.")
    return redirect("accounts:following")
