"""The reader's library: save controls, lists, notes, sharing and the lists' citation exports."""

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

from papers.citations.export import citation_response
from papers.models import Paper
from papers.selectors import papers_with_short_bylines
from wovepaper.lib.api.throttles import UserRateThrottle
from wovepaper.lib.negotiation import render_page
from wovepaper.lib.next_url import next_url_or
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from . import library_import, recommendations, selectors, services
from .forms import ListNameForm, NoteForm
from .models import ReadingList

LIST_PAGE_SIZE = 50
# "Papers like this list" shown on its page.
LIST_RECOMMENDATIONS = 10
# A list's export holds its newest saved papers up to this many, and says so when cut.
LIST_EXPORT_MAX = 2000
# Papers marked not relevant, a page.
NOT_RELEVANT_PAGE_SIZE = 50


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
        (control,) = selectors.save_controls(user=request.user, papers=[paper], next_url=next_url)
        return render(request, "accounts/_save_button.html", {"control": control})
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
        reading_list = selectors.reading_list_of_user(user=reader.user, pk=list_id)
        if reading_list is None:
            raise Http404("no such list of yours")
    saved = services.paper_save(user=reader.user, paper=paper, reading_list=reading_list)
    return _control_answer(reader, paper, next_url, f"Saved in {saved.reading_list.name}.")


@require_POST
def unsave(request: HttpRequest) -> HttpResponse:
    """Take a paper out of the reader's library (every list, or the one named by `list`)."""
    paper = get_object_or_404(Paper, pk=_int(request.POST.get("paper")) or 0)
    next_url = next_url_or(request, paper.get_absolute_url())
    if not request.user.is_authenticated:
        return _signed_out_answer(request, next_url)
    reader: AuthenticatedHttpRequest = request  # type: ignore[assignment]
    lists = None
    list_id = _int(request.POST.get("list"))
    if list_id is not None:
        reading_list = selectors.reading_list_of_user(user=reader.user, pk=list_id)
        lists = [reading_list] if reading_list is not None else []
    services.paper_unsave(user=reader.user, paper_id=paper.pk, reading_lists=lists)
    return _control_answer(reader, paper, next_url, "Removed from your library.")


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
    services.recommendation_dismiss(user=reader.user, paper=paper)
    if reader.htmx:
        context = {"paper": paper, "list_id": _int(request.POST.get("list")), "next_url": next_url}
        return render(request, "accounts/_recommendation_undo.html", context)
    messages.success(request, "Marked not relevant: papers like it will rank lower.")
    return redirect(next_url)


@login_required
def _not_relevant_page(request: AuthenticatedHttpRequest) -> HttpResponse:
    page = Paginator(
        selectors.recommendation_dismissals(user=request.user), NOT_RELEVANT_PAGE_SIZE
    ).get_page(request.GET.get("page"))
    context = {"page": page, "rows": list(page.object_list)}
    response = render_page(request, "accounts/library_not_relevant", context)
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
    services.recommendation_undismiss(user=reader.user, paper_id=paper.pk)
    if reader.htmx:
        list_id = _int(request.POST.get("list"))
        reading_list = (
            selectors.reading_list_of_user(user=reader.user, pk=list_id) if list_id else None
        )
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
        return render(request, "accounts/_recommendation.html", context)
    messages.success(request, f"Undone: “{paper.title}” may be recommended again.")
    return redirect(next_url)


@login_required
@require_http_methods(["GET", "POST"])
def library(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The reader's lists with their sizes; a POST makes a new list."""
    form = ListNameForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            made = services.reading_list_create(user=request.user, name=form.cleaned_data["name"])
        except services.LibraryError as exc:
            form.add_error("name", str(exc))
        else:
            messages.success(request, f"List “{made.name}” made.")
            return redirect("accounts:library_list", made.pk)
    lists = selectors.reading_lists_for_user(user=request.user)
    if not lists:
        lists = [services.reading_list_default(user=request.user)]
        setattr(lists[0], "paper_count", 0)  # noqa: B010 (as reading_lists_for_user sets it)
    context = {
        "lists": lists,
        "form": form,
        "max_lists": services.LIBRARY_MAX_LISTS,
    }
    response = render_page(request, "accounts/library", context)
    patch_cache_control(response, private=True, no_store=True)
    return response


def _own_list(request: AuthenticatedHttpRequest, list_id: int) -> ReadingList:
    reading_list = selectors.reading_list_of_user(user=request.user, pk=list_id)
    if reading_list is None:
        raise Http404("no such list of yours")
    return reading_list


@login_required
@require_GET
def library_list(request: AuthenticatedHttpRequest, list_id: int) -> HttpResponse:
    """One list: its papers (newest saved first, LIST_PAGE_SIZE a page) with their notes, and
    the list's rename, share, export and delete controls."""
    reading_list = _own_list(request, list_id)
    page = Paginator(selectors.saved_papers(reading_list=reading_list), LIST_PAGE_SIZE).get_page(
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
    }
    response = render_page(request, "accounts/library_list", context)
    patch_cache_control(response, private=True, no_store=True)
    return response


@login_required
@require_POST
def list_rename(request: AuthenticatedHttpRequest, list_id: int) -> HttpResponse:
    reading_list = _own_list(request, list_id)
    form = ListNameForm(request.POST)
    if form.is_valid():
        try:
            services.reading_list_rename(reading_list=reading_list, name=form.cleaned_data["name"])
        except services.LibraryError as exc:
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
    services.reading_list_delete(reading_list=reading_list)
    messages.success(request, f"List “{reading_list.name}” deleted, with its notes.")
    return redirect("accounts:library")


@login_required
@require_POST
def list_share(request: AuthenticatedHttpRequest, list_id: int) -> HttpResponse:
    reading_list = services.reading_list_share(reading_list=_own_list(request, list_id))
    messages.success(request, "Anyone with the link can now read this list (not your notes).")
    return redirect("accounts:library_list", reading_list.pk)


@login_required
@require_POST
def list_unshare(request: AuthenticatedHttpRequest, list_id: int) -> HttpResponse:
    reading_list = services.reading_list_unshare(reading_list=_own_list(request, list_id))
    messages.success(request, "The list is private again; its link no longer works.")
    return redirect("accounts:library_list", reading_list.pk)


@login_required
@require_POST
def note(request: AuthenticatedHttpRequest, list_id: int, paper_id: int) -> HttpResponse:
    """Replace a saved paper's note; an htmx form gets the note's form back."""
    saved = selectors.saved_paper_of_user(
        user=request.user, reading_list_id=list_id, paper_id=paper_id
    )
    if saved is None:
        raise Http404("no such saved paper of yours")
    form = NoteForm(request.POST)
    error = ""
    if form.is_valid():
        try:
            services.saved_paper_note_set(saved=saved, note=form.cleaned_data["note"])
        except services.LibraryError as exc:
            error = str(exc)
    else:
        error = "The note could not be read."
    if request.htmx:
        return render(
            request,
            "accounts/_note_form.html",
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
    services.paper_unsave(user=request.user, paper_id=paper_id, reading_lists=[reading_list])
    if request.htmx:
        return HttpResponse("")
    messages.success(request, f"Removed from “{reading_list.name}”, with its note.")
    return redirect(next_url_or(request, reverse("accounts:library_list", args=[list_id])))


def _list_export(
    reading_list: ReadingList, extension: str, filename: str, *, with_notes: bool
) -> HttpResponse:
    papers, cut_note, notes = selectors.reading_list_citation_export(
        reading_list, limit=LIST_EXPORT_MAX
    )
    return citation_response(
        papers,
        extension=extension,
        filename=filename,
        cut_note=cut_note,
        notes=notes if with_notes else None,
    )


@login_required
@require_GET
def library_cite(request: AuthenticatedHttpRequest, list_id: int, extension: str) -> HttpResponse:
    """A list as one citation file (BibTeX, RIS or CSL-JSON), newest saved first."""
    response = _list_export(
        _own_list(request, list_id), extension, f"list-{list_id}", with_notes=True
    )
    patch_cache_control(response, private=True, no_store=True)
    return response


def _shared(token: str) -> ReadingList:
    reading_list = selectors.reading_list_shared(token=token)
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
    page = Paginator(selectors.saved_papers(reading_list=reading_list), LIST_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    papers = papers_with_short_bylines([row.paper for row in page.object_list])
    context = {
        "reading_list": reading_list,
        "page": page,
        "papers": papers,
        "cite_base": reverse("accounts:shared_list_cite", args=[token, "bib"])[:-4],
    }
    return _unlisted(render_page(request, "accounts/shared_list", context))


@require_GET
def shared_list_cite(request: HttpRequest, token: str, extension: str) -> HttpResponse:
    # A shared list's readers see its papers, never its owner's notes.
    return _unlisted(_list_export(_shared(token), extension, "list", with_notes=False))


class LibraryImportThrottle(UserRateThrottle):
    """Imports per account (API_THROTTLE_RATES["imports"]), counted like the API's requests."""

    scope = "imports"


@login_required
@require_http_methods(["GET", "POST"])
def list_import(request: AuthenticatedHttpRequest, list_id: int) -> HttpResponse:
    """Import a BibTeX or RIS file into the list and show what matched and what did not. The
    result's address opened again (a reload, a bookmark) leads to the list and its import form:
    the file is not kept, and what it added is in the list."""
    reading_list = _own_list(request, list_id)
    if request.method == "GET":
        messages.info(
            request,
            "An import's report is shown once, as the file is read; the papers it added are in "
            "this list. Choose a file below to import again.",
        )
        return redirect("accounts:library_list", reading_list.pk)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a BibTeX (.bib) or RIS (.ris) file to import.")
        return redirect("accounts:library_list", reading_list.pk)
    throttle = LibraryImportThrottle()
    if not throttle.allow_request(request, None):
        wait = int((throttle.wait() or 0) + 0.999)
        refused = library_import.ImportReport(
            error=f"You have imported as many files as an hour allows; try again in "
            f"{max(wait // 60, 1)} minute{'s' if wait >= 120 else ''}."
        )
        context = {"reading_list": reading_list, "report": refused, "filename": upload.name}
        response = render_page(request, "accounts/library_import", context, status=429)
        response["Retry-After"] = str(wait)
        patch_cache_control(response, private=True, no_store=True)
        return response
    data = upload.read(library_import.IMPORT_MAX_BYTES + 1)
    if len(data) > library_import.IMPORT_MAX_BYTES:
        messages.error(
            request,
            f"The file is larger than {library_import.IMPORT_MAX_BYTES // (1024 * 1024)} MB; "
            "export fewer references at a time.",
        )
        return redirect("accounts:library_list", reading_list.pk)
    report = library_import.library_import(
        user=request.user,
        reading_list=reading_list,
        text=data.decode("utf-8-sig", errors="replace"),
        filename=upload.name or "",
    )
    context = {
        "reading_list": reading_list,
        "report": report,
        "filename": upload.name,
        "max_entries": library_import.IMPORT_MAX_ENTRIES,
    }
    response = render_page(request, "accounts/library_import", context)
    patch_cache_control(response, private=True, no_store=True)
    return response
