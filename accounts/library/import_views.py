"""Importing a BibTeX or RIS file into a list."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_http_methods

from wovepaper.lib.api.throttles import UserRateThrottle
from wovepaper.lib.negotiation import render_page
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from . import import_jobs, importing
from .list_views import _own_list


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
        refused = {
            "error": f"You have imported as many files as an hour allows; try again in "
            f"{max(wait // 60, 1)} minute{'s' if wait >= 120 else ''}."
        }
        context = {"reading_list": reading_list, "report": refused, "filename": upload.name}
        response = render_page(request, "accounts/library/library_import", context, status=429)
        response["Retry-After"] = str(wait)
        patch_cache_control(response, private=True, no_store=True)
        return response
    data = upload.read(importing.IMPORT_MAX_BYTES + 1)
    if len(data) > importing.IMPORT_MAX_BYTES:
        messages.error(
            request,
            f"The file is larger than {importing.IMPORT_MAX_BYTES // (1024 * 1024)} MB; "
            "export fewer references at a time.",
        )
        return redirect("accounts:library_list", reading_list.pk)
    job = import_jobs.library_import_start(
        user=request.user,
        reading_list=reading_list,
        # Control characters go before the text is stored: PostgreSQL keeps no NUL.
        text=importing.text_cleaned(data.decode("utf-8-sig", errors="replace")),
        filename=upload.name or "",
    )
    return redirect("accounts:list_import_job", reading_list.pk, job.pk)


@login_required
@require_http_methods(["GET"])
def list_import_job(request: AuthenticatedHttpRequest, list_id: int, job_id: int) -> HttpResponse:
    """An import's page: queued, running (it looks again every two seconds), then its report."""
    reading_list = _own_list(request, list_id)
    job = import_jobs.library_import_job(
        user=request.user, reading_list_id=reading_list.pk, job_id=job_id
    )
    if job is None:
        raise Http404("No such import.")
    context = {
        "reading_list": reading_list,
        "job": job,
        "report": job.report,
        "filename": job.filename,
        "max_entries": importing.IMPORT_MAX_ENTRIES,
    }
    response = render_page(request, "accounts/library/library_import", context)
    patch_cache_control(response, private=True, no_store=True)
    return response
