"""A verified researcher's corrections to their own page: papers that are not theirs, papers of a
same-name record that are theirs too, same-name records to merge, and what the page shows (name,
current affiliation, homepage, listing). Each change is a researchers.owner_edits service; only the
owner of the record (a confirmed claim) reaches these pages."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from institutions.selectors import institution_lookup
from researchers import owner_edits
from researchers.curation.identity import researcher_public_history
from researchers.curation.reports import ReportError
from researchers.models import Researcher
from researchers.selectors import researcher_same_name
from wovepaper.lib.negotiation import render_page
from wovepaper.lib.paging import page_number
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from ..forms import OwnerBylineForm, OwnerMergeForm, OwnerProfileForm
from . import corrections

OwnerView = Callable[[AuthenticatedHttpRequest, Researcher], HttpResponse]


def _owner_only(view: OwnerView):
    """The record must be the signed-in reader's verified page: anyone else gets a 404, so the
    address says nothing about whose page it is."""

    @wraps(view)
    @login_required
    def wrapper(request: AuthenticatedHttpRequest, researcher_id: int) -> HttpResponse:
        researcher = corrections.owned_researcher(user=request.user, researcher_id=researcher_id)
        if researcher is None:
            raise Http404("not your verified page")
        return view(request, researcher)

    return wrapper


def _back(researcher: Researcher) -> HttpResponse:
    return redirect(reverse("accounts:owner", args=[researcher.pk]))


@require_GET
@_owner_only
def owner_page(request: AuthenticatedHttpRequest, researcher: Researcher) -> HttpResponse:
    return _owner_page(request, researcher)


def _owner_page(
    request: AuthenticatedHttpRequest,
    researcher: Researcher,
    profile: OwnerProfileForm | None = None,
) -> HttpResponse:
    """The page; with `profile`, the form as the owner sent it, with what was refused."""
    page = page_number(request)
    data = corrections.owner_page(researcher, page=page)
    if profile is None:
        profile = OwnerProfileForm(
            initial={
                "display_name": researcher.display_name,
                "institution": researcher.current_institution_id,
                "homepage": researcher.homepage,
                "hidden": researcher.hidden,
            },
            institutions=data.institutions,
        )
    context = {
        "researcher": researcher,
        "data": data,
        "page": page,
        "profile_form": profile,
        "history": researcher_public_history(researcher),
    }
    return render_page(request, "accounts/owner", context)


# The form's field for each of the service's, and how a message names each form field.
_PROFILE_FIELDS = {"current_institution": "institution"}
_PART_NAMES = {
    "display_name": "the name shown",
    "institution": "the affiliation",
    "ror_id": "the ROR id",
    "homepage": "the homepage",
    "hidden": "the listing",
    "reason": "the reason",
}


def _byline_action(service: Callable[..., object], done: str) -> OwnerView:
    @require_POST
    @_owner_only
    def view(request: AuthenticatedHttpRequest, researcher: Researcher) -> HttpResponse:
        form = OwnerBylineForm(request.POST)
        if not form.is_valid():
            messages.error(request, "Say why, in a few words: the reason is public.")
            return _back(researcher)
        try:
            service(
                researcher_id=researcher.pk,
                authorship_id=form.cleaned_data["authorship"],
                reason=form.cleaned_data["reason"],
            )
        except owner_edits.OwnershipError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, done)
        return _back(researcher)

    return view


owner_not_mine = _byline_action(
    owner_edits.owner_paper_remove,
    "The paper left your page. It is in your page's history as removed by you, and the curators "
    "can see it.",
)
owner_mine_too = _byline_action(
    owner_edits.owner_paper_attach, "The paper is on your page now, and in its history."
)


@require_POST
@_owner_only
def owner_propose_merge(request: AuthenticatedHttpRequest, researcher: Researcher) -> HttpResponse:
    records = researcher_same_name(researcher, limit=corrections.SAME_NAME_SHOWN)
    form = OwnerMergeForm(request.POST, records=records)
    if not form.is_valid():
        messages.error(request, "Choose the records that are you, and say why.")
        return _back(researcher)
    try:
        owner_edits.owner_merge_propose(
            researcher_id=researcher.pk,
            other_ids=form.cleaned_data["others"],
            reason=form.cleaned_data["reason"],
            user=request.user,
        )
    except (owner_edits.OwnershipError, ReportError) as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            "The curators have your proposal; your account page shows their decision.",
        )
    return _back(researcher)


@require_POST
@_owner_only
def owner_profile(request: AuthenticatedHttpRequest, researcher: Researcher) -> HttpResponse:
    data = corrections.owner_page(researcher)
    form = OwnerProfileForm(request.POST, institutions=data.institutions)
    if form.is_valid() and form.cleaned_data["ror_id"]:
        found = institution_lookup(form.cleaned_data["ror_id"])
        if found is None or not found.ror_id:
            form.add_error(
                "ror_id",
                "We hold no institution with this ROR id: choose one from the list above, or "
                "give the ROR id of one we hold.",
            )
        else:
            form.cleaned_data["institution"] = found.pk
    if form.is_valid():
        cleaned = form.cleaned_data
        changes = {
            "display_name": cleaned["display_name"],
            "current_institution": cleaned["institution"],
            "homepage": cleaned["homepage"],
            "hidden": cleaned["hidden"],
        }
        try:
            changed = owner_edits.owner_settings_set(
                researcher_id=researcher.pk, changes=changes, reason=cleaned["reason"]
            )
        except owner_edits.OwnerFieldsRefused as exc:
            for field, why in exc.refused.items():
                form.add_error(_PROFILE_FIELDS.get(field, field), why)
        except owner_edits.OwnershipError as exc:
            form.add_error(None, str(exc))
    if not form.is_valid():
        # Shown again as sent, each refused part marked: nothing was saved.
        refused = [_PART_NAMES.get(f, f) for f in form.errors if f != "__all__"]
        messages.error(
            request,
            f"Nothing changed: {', '.join(refused) or 'the change'} could not be saved as "
            "written; what you typed is kept below.",
        )
        return _owner_page(request, researcher, profile=form)
    messages.success(
        request,
        f"{changed} change{'s' if changed != 1 else ''} saved, each in your page's history."
        if changed
        else "Nothing to change.",
    )
    return _back(researcher)
