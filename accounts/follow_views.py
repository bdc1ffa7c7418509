"""Following and unfollowing a researcher or an institution, and the list of the researchers a
reader follows."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from institutions.models import Institution
from researchers.models import Researcher
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from . import follows
from .record_actions import institution_action, researcher_action

FOLLOWED_PAGE_SIZE = 50


@require_POST
@researcher_action
def follow(
    request: AuthenticatedHttpRequest, researcher: Researcher, next_url: str
) -> HttpResponse:
    try:
        target = follows.researcher_follow(user=request.user, researcher=researcher).researcher
    except follows.FollowError as exc:
        if request.htmx:
            return HttpResponse(str(exc), status=409)
        messages.error(request, str(exc))
        return redirect(next_url)
    return _follow_answer(request, target, next_url, f"You now follow {target.display_name}.")


@require_POST
@researcher_action
def unfollow(
    request: AuthenticatedHttpRequest, researcher: Researcher, next_url: str
) -> HttpResponse:
    follows.researcher_unfollow(user=request.user, researcher=researcher)
    return _follow_answer(
        request, researcher, next_url, f"You no longer follow {researcher.display_name}."
    )


def _follow_answer(
    request: AuthenticatedHttpRequest, record: Researcher | Institution, next_url: str, message: str
) -> HttpResponse:
    if request.htmx:
        context = follows.follow_button_context(request, record, next_url=next_url)
        return render(request, "accounts/_follow_button.html", context)
    messages.success(request, message)
    return redirect(next_url)


@require_POST
@institution_action
def follow_institution(
    request: AuthenticatedHttpRequest, institution: Institution, next_url: str
) -> HttpResponse:
    follows.institution_follow(user=request.user, institution=institution)
    return _follow_answer(request, institution, next_url, f"You now follow {institution.name}.")


@require_POST
@institution_action
def unfollow_institution(
    request: AuthenticatedHttpRequest, institution: Institution, next_url: str
) -> HttpResponse:
    follows.institution_unfollow(user=request.user, institution=institution)
    return _follow_answer(
        request, institution, next_url, f"You no longer follow {institution.name}."
    )


@login_required
@require_GET
def followed_researchers(request: AuthenticatedHttpRequest) -> HttpResponse:
    paginator = Paginator(follows.follows_for_user(user=request.user), FOLLOWED_PAGE_SIZE)
    page = paginator.get_page(request.GET.get("page"))
    researchers = [f.researcher for f in page.object_list]
    follows.researchers_with_follow_state(researchers, user=request.user)
    return render(request, "accounts/followed.html", {"page": page, "researchers": researchers})
