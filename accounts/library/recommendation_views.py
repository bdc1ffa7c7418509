"""Papers like your list: "Not relevant", its undo, and the page of the marks."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_http_methods, require_POST

from papers.models import Paper
from wovepaper.lib.negotiation import render_page
from wovepaper.lib.next_url import next_url_or
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from . import lists, recommendations
from .list_views import _int, _signed_out_answer

# Papers marked not relevant, a page.
NOT_RELEVANT_PAGE_SIZE = 50


@require_http_methods(["GET", "POST"])
def not_relevant(request: HttpRequest) -> HttpResponse:
    """GET: the papers the reader marked not relevant, each with its undo. POST: mark a
    recommended paper (`paper`: its id) not relevant: it goes, and papers like it rank lower.
    htmx is answered with the line that takes its place, which can undo it (`list`: the list
    whose page it was recommended on, so the undo shows it again as that page did)."""
    if request.method == "GET":
        # login_required on the page sends a signed-out visitor to sign in first.
        return _not_relevant_page(request)  # type: ignore[arg-type]
    paper = get_object_or_404(Paper, pk=_int(request.POST.get("paper")) or 0)
    next_url = next_url_or(request, reverse("accounts:library"))
    if not request.user.is_authenticated:
        return _signed_out_answer(request, next_url)
    reader: AuthenticatedHttpRequest = request  # type: ignore[assignment]
    recommendations.recommendation_dismiss(user=reader.user, paper=paper)
    if reader.htmx:
        context = {"paper": paper, "list_id": _int(request.POST.get("list")), "next_url": next_url}
        return render(request, "accounts/library/_recommendation_undo.html", context)
    messages.success(request, "Marked not relevant: papers like it will rank lower.")
    return redirect(next_url)


@login_required
def _not_relevant_page(request: AuthenticatedHttpRequest) -> HttpResponse:
    page = Paginator(
        recommendations.recommendation_dismissals(user=request.user), NOT_RELEVANT_PAGE_SIZE
    ).get_page(request.GET.get("page"))
    context = {"page": page, "rows": list(page.object_list)}
    response = render_page(request, "accounts/library/library_not_relevant", context)
    patch_cache_control(response, private=True, no_store=True)
    return response


@require_POST
def not_relevant_undo(request: HttpRequest) -> HttpResponse:
    """Take back a "not relevant" (`paper`: its id) through the service the API's DELETE uses.
    htmx (from the line that replaced the recommendation) gets the recommendation back, shown
    as before; a plain post is redirected to `next` (the not-relevant page by default)."""
    paper = get_object_or_404(Paper, pk=_int(request.POST.get("paper")) or 0)
    next_url = next_url_or(request, reverse("accounts:not_relevant"))
    if not request.user.is_authenticated:
        return _signed_out_answer(request, next_url)
    reader: AuthenticatedHttpRequest = request  # type: ignore[assignment]
    recommendations.recommendation_undismiss(user=reader.user, paper_id=paper.pk)
    if reader.htmx:
        list_id = _int(request.POST.get("list"))
        reading_list = lists.reading_list_of_user(user=reader.user, pk=list_id) if list_id else None
        rec = recommendations.recommendation_of(
            user=reader.user, paper=paper, reading_list=reading_list
        )
        # rec is None when nothing is left to rank it by (its vector or the saved papers'):
        # the template then says it is undone without showing it.
        context = {
            "rec": rec,
            "rec_list_id": reading_list.pk if reading_list else None,
            "next_url": next_url,
            "focus": True,
        }
        return render(request, "accounts/library/_recommendation.html", context)
    messages.success(request, f"Undone: “{paper.title}” may be recommended again.")
    return redirect(next_url)
