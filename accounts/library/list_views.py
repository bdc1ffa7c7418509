"""The reader's library: save controls, lists, notes, sharing and the lists' citation files."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from papers.archive_time import archive_time
from papers.models import Paper
from papers.selectors import papers_with_short_bylines
from wovepaper.lib.negotiation import render_page
from wovepaper.lib.next_url import next_url_or
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from . import lists, notes, recommendations
from .exporting import list_export
from .forms import ListNameForm, NoteForm
from .models import ReadingList

LIST_PAGE_SIZE = 50
# "Papers like this list" shown on its page.
LIST_RECOMMENDATIONS = 10


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isascii() and value.isdigit() else None


def _signed_out_answer(request: HttpRequest, next_url: str) -> HttpResponse:
    """A signed-out visitor is sent to sign in and comes back (an htmx control is told to go)."""
    if request.htmx:  # type: ignore[attr-defined]
        return HttpResponseClientRedirect(
            f"{reverse('account_login')}?{urlencode({'next': next_url})}"
        )
    return redirect_to_login(next_url)


def _control_answer(request: AuthenticatedHttpRequest, paper: Paper, next_url: str, message: str):
    if request.htmx:
        (control,) = lists.save_controls(user=request.user, papers=[paper], next_url=next_url)
        return render(request, "accounts/library/_save_button.html", {"control": control})
    messages.success(request, message)
    return redirect(next_url)


@require_POST
def save(request: HttpRequest) -> HttpResponse:
    """Save a paper (`paper`: its id) into a list of the reader's (`list`; "Reading list" when
    none is given). Answers an htmx control with the control's new state."""
    paper = get_object_or_404(Paper, pk=_int(request.POST.get("paper")) or 0, is_deleted=False)
    next_url = next_url_or(request, paper.get_absolute_url())
    if not request.user.is_authenticated:
        return _signed_out_answer(request, next_url)
    reader: AuthenticatedHttpRequest = request  # type: ignore[assignment]
    reading_list = None
    list_id = _int(request.POST.get("list"))
    if list_id is not None:
        reading_list = lists.reading_list_of_user(user=reader.user, pk=list_id)
        if reading_list is None:
            raise Http404("no such list of yours")
    saved = lists.paper_save(user=reader.user, paper=paper, reading_list=reading_list)
    return _control_answer(reader, paper, next_url, f"Saved in {saved.reading_list.name}.")


@require_POST
def unsave(request: HttpRequest) -> HttpResponse:
    """Take a paper out of the reader's library (every list, or the one named by `list`)."""
    paper = get_object_or_404(Paper, pk=_int(request.POST.get("paper")) or 0)
    next_url = next_url_or(request, paper.get_absolute_url())
    if not request.user.is_authenticated:
        return _signed_out_answer(request, next_url)
    reader: AuthenticatedHttpRequest = request  # type: ignore[assignment]
    chosen = None
    list_id = _int(request.POST.get("list"))
    if list_id is not None:
        reading_list = lists.reading_list_of_user(user=reader.user, pk=list_id)
        chosen = [reading_list] if reading_list is not None else []
    lists.paper_unsave(user=reader.user, paper_id=paper.pk, reading_lists=chosen)
    return _control_answer(reader, paper, next_url, "Removed from your library.")


@login_required
@require_http_methods(["GET", "POST"])
def library(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The reader's lists with their sizes; a POST makes a new list."""
    form = ListNameForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            made = lists.reading_list_create(user=request.user, name=form.cleaned_data["name"])
        except lists.LibraryError as exc:
            form.add_error("name", str(exc))
        else:
            messages.success(request, f"List “{made.name}” made.")
            return redirect("accounts:library_list", made.pk)
    own = lists.reading_lists_for_user(user=request.user)
    if not own:
        own = [lists.reading_list_default(user=request.user)]
        setattr(own[0], "paper_count", 0)  # noqa: B010 (as reading_lists_for_user sets it)
    context = {
        "lists": own,
        "form": form,
        "max_lists": lists.LIBRARY_MAX_LISTS,
    }
    response = render_page(request, "accounts/library/library", context)
    patch_cache_control(response, private=True, no_store=True)
    return response


def _own_list(request: AuthenticatedHttpRequest, list_id: int) -> ReadingList:
    reading_list = lists.reading_list_of_user(user=request.user, pk=list_id)
    if reading_list is None:
        raise Http404("no such list of yours")
    return reading_list


@login_required
@require_GET
def library_list(request: AuthenticatedHttpRequest, list_id: int) -> HttpResponse:
    """One list: its papers (newest saved first, LIST_PAGE_SIZE a page) with their notes, and
    the list's rename, share, export and delete controls."""
    reading_list = _own_list(request, list_id)
    page = Paginator(lists.saved_papers(reading_list=reading_list), LIST_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    rows = list(page.object_list)
    papers_with_short_bylines([row.paper for row in rows])
    share_url = (
        request.build_absolute_uri(reverse("accounts:shared_list", args=[reading_list.share_token]))
        if reading_list.share_token
        else ""
    )
    context = {
        "reading_list": reading_list,
        "page": page,
        "rows": rows,
        "share_url": share_url,
        "rename_form": ListNameForm(initial={"name": reading_list.name}),
        "cite_base": reverse("accounts:library_cite", args=[reading_list.pk, "bib"])[:-4],
        "recommendations": recommendations.list_recommendations(
            reading_list=reading_list, count=LIST_RECOMMENDATIONS
        ),
        "recommendation_days": recommendations.recommendation_days(),
        "clock": archive_time(),
        "nothing_saved": ""
        if page.paginator.count
        else "Save papers to this list, and papers like them show here.",
    }
    response = render_page(request, "accounts/library/library_list", context)
    patch_cache_control(response, private=True, no_store=True)
    return response


@login_required
@require_POST
def list_rename(request: AuthenticatedHttpRequest, list_id: int) -> HttpResponse:
    reading_list = _own_list(request, list_id)
    form = ListNameForm(request.POST)
    if form.is_valid():
        try:
            lists.reading_list_rename(reading_list=reading_list, name=form.cleaned_data["name"])
        except lists.LibraryError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"List renamed “{reading_list.name}”.")
    else:
        messages.error(request, "A list needs a name of at most 100 characters.")
    return redirect("accounts:library_list", reading_list.pk)


@login_required
@require_POST
def list_delete(request: AuthenticatedHttpRequest, list_id: int) -> HttpResponse:
    reading_list = _own_list(request, list_id)
    lists.reading_list_delete(reading_list=reading_list)
    messages.success(request, f"List “{reading_list.name}” deleted, with its notes.")
    return redirect("accounts:library")


@login_required
@require_POST
def list_share(request: AuthenticatedHttpRequest, list_id: int) -> HttpResponse:
    reading_list = lists.reading_list_share(reading_list=_own_list(request, list_id))
    messages.success(request, "Anyone with the link can now read this list (not your notes).")
    return redirect("accounts:library_list", reading_list.pk)


@login_required
@require_POST
def list_unshare(request: AuthenticatedHttpRequest, list_id: int) -> HttpResponse:
    reading_list = lists.reading_list_unshare(reading_list=_own_list(request, list_id))
    messages.success(request, "The list is private again; its link no longer works.")
    return redirect("accounts:library_list", reading_list.pk)


@login_required
@require_POST
def note(request: AuthenticatedHttpRequest, list_id: int, paper_id: int) -> HttpResponse:
    """Replace a saved paper's note; an htmx form gets the note's form back."""
    saved = lists.saved_paper_of_user(user=request.user, reading_list_id=list_id, paper_id=paper_id)
    if saved is None:
        raise Http404("no such saved paper of yours")
    form = NoteForm(request.POST)
    error = ""
    if form.is_valid():
        try:
            notes.saved_paper_note_set(saved=saved, note=form.cleaned_data["note"])
        except lists.LibraryError as exc:
            error = str(exc)
    else:
        error = "The note could not be read."
    if request.htmx:
        return render(
            request,
            "accounts/library/_note_form.html",
            {"row": saved, "reading_list": saved.reading_list, "note_error": error},
            status=400 if error else 200,
        )
    if error:
        messages.error(request, error)
    else:
        messages.success(request, "Note saved.")
    return redirect(next_url_or(request, reverse("accounts:library_list", args=[list_id])))


@login_required
@require_POST
def remove(request: AuthenticatedHttpRequest, list_id: int, paper_id: int) -> HttpResponse:
    reading_list = _own_list(request, list_id)
    lists.paper_unsave(user=request.user, paper_id=paper_id, reading_lists=[reading_list])
    if request.htmx:
        return HttpResponse("")
    messages.success(request, f"Removed from “{reading_list.name}”, with its note.")
    return redirect(next_url_or(request, reverse("accounts:library_list", args=[list_id])))


@login_required
@require_GET
def library_cite(request: AuthenticatedHttpRequest, list_id: int, extension: str) -> HttpResponse:
    """A list as one citation file (BibTeX, RIS or CSL-JSON), newest saved first."""
    response = list_export(
        _own_list(request, list_id), extension, f"list-{list_id}", with_notes=True
    )
    patch_cache_control(response, private=True, no_store=True)
    return response


def _shared(token: str) -> ReadingList:
    reading_list = lists.reading_list_shared(token=token)
    if reading_list is None:
        raise Http404("no list is shared under this link")
    return reading_list


def _unlisted(response: HttpResponse) -> HttpResponse:
    """A shared list is public to whoever holds its link, and nowhere else: no search engine
    lists it, no cache keeps it past an unsharing, and no link on it tells another site the
    address it was followed from."""
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["Referrer-Policy"] = "no-referrer"
    patch_cache_control(response, private=True, no_store=True)
    return response


@require_GET
def shared_list(request: HttpRequest, token: str) -> HttpResponse:
    """A shared list, read-only, without the owner's notes or name."""
    reading_list = _shared(token)
    page = Paginator(lists.saved_papers(reading_list=reading_list), LIST_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    papers = papers_with_short_bylines([row.paper for row in page.object_list])
    context = {
        "reading_list": reading_list,
        "page": page,
        "papers": papers,
        "cite_base": reverse("accounts:shared_list_cite", args=[token, "bib"])[:-4],
    }
    return _unlisted(render_page(request, "accounts/library/shared_list", context))


@require_GET
def shared_list_cite(request: HttpRequest, token: str, extension: str) -> HttpResponse:
    # A shared list's readers see its papers, never its owner's notes.
    return _unlisted(list_export(_shared(token), extension, "list", with_notes=False))
