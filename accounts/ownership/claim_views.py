"""The "this is me" button's confirm step and the claim it sends."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from researchers.models import Researcher
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from ..follows import FollowError
from ..forms import ClaimForm
from ..models import Claim
from ..record_actions import researcher_action
from .claim_evidence import claim_preview
from .claims import orcid_merge_proposals, researcher_claim


@require_http_methods(["GET", "POST"])
@researcher_action
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
        claimed = researcher_claim(user=request.user, researcher=researcher, message=message)
    except FollowError as exc:
        messages.error(request, str(exc))
        return redirect(next_url)
    if claimed.status == claimed.Status.CONFIRMED:
        proposals = orcid_merge_proposals(researcher=claimed.researcher)
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
