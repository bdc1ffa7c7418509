"""Pages and actions for signed-in users: onboarding, following, settings, unsubscribe."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from functools import wraps
from typing import Any, TypeVar, cast
from urllib.parse import urlencode

from allauth.account.decorators import reauthentication_required
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect
from rest_framework.authtoken.models import Token

from institutions.models import Institution
from papers.archive_time import archive_time
from papers.citations.lists import citations_of_researchers
from papers.models import Paper
from papers.selectors import papers_with_short_bylines
from researchers.curation.reports import reports_of_user
from researchers.models import Researcher
from researchers.name_search import researchers_search
from researchers.similar import more_like_followed
from wovepaper.lib.negotiation import render_page
from wovepaper.lib.next_url import next_url_or
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from . import digests, reader_state, selectors, services
from .categories import categories_by_code, categories_search, category_list
from .claim_evidence import claim_preview
from .forms import ClaimForm, DeleteAccountForm, FieldsForm, SettingsForm
from .library import alerts, recommendations
from .models import Claim, Profile

FEED_PAGE_SIZE = 20
# The newest papers citing the followed researchers' papers, beside their new papers.
FEED_CITATIONS = 10
FEED_MAX_PAGES = 25
FEED_ALERTS = 20
# "Papers like your library" in the feed.
FEED_RECOMMENDATIONS = 5
# New versions, withdrawals and journal references of saved or followed papers in the feed.
FEED_CHANGES = 20
# ... of this age at most, so that the query reads a bounded range of the recorded-at index.
FEED_CHANGES_AGE = timedelta(days=30)
FOLLOWED_PAGE_SIZE = 50
SIDEBAR_FOLLOWS = 30


# --- the reader's own parts of a shared public page --------------------------------------------


@require_GET
def me_state(request: HttpRequest) -> HttpResponse:
    """The signed-in reader's state for the pages every signed-in reader shares
    (accounts.reader_state), which their browser keeps; nothing for anyone else."""
    if not request.user.is_authenticated:
        return reader_state.state_response(None)
    signed_in = cast(AuthenticatedHttpRequest, request)
    return reader_state.state_response(reader_state.reader_state(request, signed_in.user))


# --- follow / unfollow / claim --------------------------------------------------------------


_Record = TypeVar("_Record", Researcher, Institution)


def _action_on(model: type[_Record]):
    """Load the record (researcher, institution) a button acts on and where to go afterwards; a
    signed-out visitor is sent to sign in first and comes back to the same place (an htmx button
    cannot follow a redirect itself, so it is told to)."""

    def decorate(view: Callable[[HttpRequest, Any, str], HttpResponse]):
        @wraps(view)
        def wrapper(request: AuthenticatedHttpRequest, **kwargs: int) -> HttpResponse:
            (pk,) = kwargs.values()
            record = get_object_or_404(model, pk=pk)
            next_url = next_url_or(request, record.get_absolute_url())
            if request.user.is_authenticated:
                return view(request, record, next_url)
            if request.htmx:
                login_url = f"{reverse('account_login')}?{urlencode({'next': next_url})}"
                return HttpResponseClientRedirect(login_url)
            return redirect_to_login(next_url)

        return wrapper

    return decorate


_researcher_action = _action_on(Researcher)
_institution_action = _action_on(Institution)


@require_POST
@_researcher_action
def follow(
    request: AuthenticatedHttpRequest, researcher: Researcher, next_url: str
) -> HttpResponse:
    try:
        target = services.researcher_follow(user=request.user, researcher=researcher).researcher
    except services.FollowError as exc:
        if request.htmx:
            return HttpResponse(str(exc), status=409)
        messages.error(request, str(exc))
        return redirect(next_url)
    return _follow_answer(request, target, next_url, f"You now follow {target.display_name}.")


@require_POST
@_researcher_action
def unfollow(
    request: AuthenticatedHttpRequest, researcher: Researcher, next_url: str
) -> HttpResponse:
    services.researcher_unfollow(user=request.user, researcher=researcher)
    return _follow_answer(
        request, researcher, next_url, f"You no longer follow {researcher.display_name}."
    )


def _follow_answer(
    request: AuthenticatedHttpRequest, record: Researcher | Institution, next_url: str, message: str
) -> HttpResponse:
    if request.htmx:
        context = selectors.follow_button_context(request, record, next_url=next_url)
        return render(request, "accounts/_follow_button.html", context)
    messages.success(request, message)
    return redirect(next_url)


@require_POST
@_institution_action
def follow_institution(
    request: AuthenticatedHttpRequest, institution: Institution, next_url: str
) -> HttpResponse:
    services.institution_follow(user=request.user, institution=institution)
    return _follow_answer(request, institution, next_url, f"You now follow {institution.name}.")


@require_POST
@_institution_action
def unfollow_institution(
    request: AuthenticatedHttpRequest, institution: Institution, next_url: str
) -> HttpResponse:
    services.institution_unfollow(user=request.user, institution=institution)
    return _follow_answer(
        request, institution, next_url, f"You no longer follow {institution.name}."
    )


@require_http_methods(["GET", "POST"])
@_researcher_action
def claim(request: AuthenticatedHttpRequest, researcher: Researcher, next_url: str) -> HttpResponse:
    """GET: the confirm step, with a box for what supports the claim; POST: send it."""
    if request.method == "GET":
        existing = Claim.objects.filter(user=request.user, researcher=researcher).first()
        context = {
            "researcher": researcher,
            "next_url": next_url,
            "claim": existing,
            "form": ClaimForm(initial={"message": existing.message if existing else ""}),
            **claim_preview(user=request.user, researcher=researcher),
        }
        return render(request, "accounts/claim_confirm.html", context)
    form = ClaimForm(request.POST)
    message = form.cleaned_data["message"] if form.is_valid() else ""
    try:
        claimed = services.researcher_claim(
            user=request.user, researcher=researcher, message=message
        )
    except services.FollowError as exc:
        messages.error(request, str(exc))
        return redirect(next_url)
    if claimed.status == claimed.Status.CONFIRMED:
        proposals = services.orcid_merge_proposals(researcher=claimed.researcher)
        also = (
            " Other records tied to your ORCID iD are proposed to the curators for merging: "
            + ", ".join(f"{r.display_name} (#{r.pk})" for r in proposals)
            + "."
            if proposals
            else ""
        )
        messages.success(
            request,
            f"Confirmed: your ORCID sign-in matches the ORCID iD of {researcher.display_name}."
            + also,
        )
    elif claimed.status == claimed.Status.PENDING:
        messages.success(request, _claim_waiting_message(claimed))
    else:
        messages.info(
            request,
            f"The curators rejected your claim to be {researcher.display_name}; "
            "your account page says why.",
        )
    return redirect(next_url)


def _claim_waiting_message(claim: Claim) -> str:
    evidence = claim.evidence or {}
    found = []
    if evidence.get("orcid_works"):
        found.append(f"{len(evidence['orcid_works'])} of your ORCID works are papers here")
    if evidence.get("email_domains"):
        found.append("your e-mail address is at an institution on these bylines")
    said = f" We found: {'; '.join(found)}." if found else ""
    competing = (
        " This record is already someone's verified page, or you already have one: one person, "
        "one verified record, so the curators decide, seeing both sides."
        if any(c["status"] == "confirmed" for c in evidence.get("conflicts", []))
        else ""
    )
    return (
        f"Thank you. The curators will review your claim to be {claim.researcher.display_name}."
        f"{said}{competing} Their decision shows in your account."
    )


# --- onboarding -------------------------------------------------------------------------------

STEP_URLS: dict[str, str] = {
    Profile.Step.FIELDS: "accounts:onboarding_fields",
    Profile.Step.RESEARCHERS: "accounts:onboarding_researchers",
    Profile.Step.CLAIM: "accounts:onboarding_claim",
}
STEP_ORDER: list[str] = [Profile.Step.FIELDS, Profile.Step.RESEARCHERS, Profile.Step.CLAIM]


@login_required
@require_GET
def onboarding(request: AuthenticatedHttpRequest) -> HttpResponse:
    profile = services.profile_get_or_create(user=request.user)
    services.onboarding_resume(profile=profile)
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
    profile = services.profile_get_or_create(user=request.user)
    if request.method == "POST":
        form = FieldsForm(request.POST)
        if form.is_valid():
            services.profile_set_fields(profile=profile, fields=form.cleaned_data["fields"])
            services.onboarding_advance(profile=profile, step=Profile.Step.RESEARCHERS)
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
    profile = services.profile_get_or_create(user=request.user)
    if request.method == "POST":
        services.onboarding_advance(profile=profile, step=Profile.Step.CLAIM)
        return redirect("accounts:onboarding_claim")
    query = request.GET.get("q", "").strip()
    results = researchers_search(query).items if query else []
    suggested = (
        []
        if query
        else selectors.researchers_suggested(
            fields=profile.fields, exclude_ids=selectors.followed_researcher_ids(user=request.user)
        )
    )
    selectors.researchers_with_follow_state(results + suggested, user=request.user)
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
    claims = list(selectors.claims_for_user(user=request.user)[:10])
    profile = services.profile_get_or_create(user=request.user)
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
    profile = services.profile_get_or_create(user=request.user)
    services.onboarding_skip(profile=profile)
    messages.info(request, "Setup skipped. You can finish it any time from your account page.")
    return redirect(next_url_or(request, "/"))


@login_required
@require_POST
def onboarding_finish(request: AuthenticatedHttpRequest) -> HttpResponse:
    profile = services.profile_get_or_create(user=request.user)
    frequency = request.POST.get("digest_frequency")
    if frequency in Profile.Digest.values:
        services.profile_set_digest(profile=profile, frequency=frequency)
    services.onboarding_complete(profile=profile)
    messages.success(request, "You're all set. New papers by the researchers you follow show here.")
    return redirect("accounts:following")


# --- following ----------------------------------------------------------------------------------


@login_required
@require_GET
def following(request: AuthenticatedHttpRequest) -> HttpResponse:
    ids = selectors.followed_researcher_ids(user=request.user)
    institution_ids = selectors.followed_institution_ids(user=request.user)
    page = feed = None
    papers: list = []
    if ids or institution_ids:
        feed = selectors.FeedPage(
            researcher_ids=ids,
            institution_ids=institution_ids,
            limit=FEED_PAGE_SIZE * FEED_MAX_PAGES,
        )
        # Paginator only counts and slices its list, which FeedPage does (it is no sequence).
        paginator: Paginator[Paper] = Paginator(feed, FEED_PAGE_SIZE)  # type: ignore[arg-type]
        page = paginator.get_page(request.GET.get("page"))
        papers = papers_with_short_bylines(page.object_list, focus_ids=ids)
    follows = list(selectors.follows_for_user(user=request.user)[: SIDEBAR_FOLLOWS + 1])
    liked = recommendations.library_recommendations(user=request.user, count=FEED_RECOMMENDATIONS)
    context = {
        "papers": papers,
        "page": page,
        "total": feed.total if feed else 0,
        "follows": follows[:SIDEBAR_FOLLOWS],
        "more_follows": len(follows) > SIDEBAR_FOLLOWS,
        "institution_follows": list(
            selectors.institution_follows_for_user(user=request.user)[:SIDEBAR_FOLLOWS]
        )
        if institution_ids
        else [],
        "empty_message": "None of the researchers and institutions you follow has a paper here "
        "yet.",
        "suggestions": more_like_followed([f.researcher for f in follows], exclude=ids),
        "citation_alerts": citations_of_researchers(ids, limit=FEED_CITATIONS),
        # The newest papers the reader's saved searches found, by search (one query).
        "alert_groups": alerts.alerts_grouped(
            alerts.alerts_for_user(user=request.user, limit=FEED_ALERTS)
        ),
        "recommendations": liked,
        # Why there are none, when the reason is that nothing is saved.
        "nothing_saved": "Save papers to a list, and papers like them show here."
        if getattr(liked, "nothing_saved", False)
        else "",
        "recommendation_days": recommendations.recommendation_days(),
        "clock": archive_time(),
        "paper_changes": selectors.paper_changes_for_user(
            user=request.user,
            researcher_ids=ids,
            since=timezone.now() - FEED_CHANGES_AGE,
            limit=FEED_CHANGES,
        ),
    }
    return render_page(request, "accounts/following", context)


@login_required
@require_GET
def followed_researchers(request: AuthenticatedHttpRequest) -> HttpResponse:
    paginator = Paginator(selectors.follows_for_user(user=request.user), FOLLOWED_PAGE_SIZE)
    page = paginator.get_page(request.GET.get("page"))
    researchers = [f.researcher for f in page.object_list]
    selectors.researchers_with_follow_state(researchers, user=request.user)
    return render(request, "accounts/followed.html", {"page": page, "researchers": researchers})


# --- account settings ---------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def account_settings(request: AuthenticatedHttpRequest) -> HttpResponse:
    profile = services.profile_get_or_create(user=request.user)
    if request.method == "POST":
        form = SettingsForm(request.POST)
        if form.is_valid():
            services.profile_set_fields(profile=profile, fields=form.cleaned_data["fields"])
            services.profile_set_digest(
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
        "claims": list(selectors.claims_for_user(user=request.user)),
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
    data = services.user_export(user=request.user)
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
            services.user_delete(user=user)
            messages.success(request, "Your account and everything in it were deleted.")
            return redirect("/")
    else:
        form = DeleteAccountForm()
    return render(request, "accounts/delete.html", {"form": form})


# --- digest unsubscribe -------------------------------------------------------------------------


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
