"""The conflict-of-interest check's page, for signed-in readers (researchers.conflicts). The
check runs on POST (it counts against the reader's daily quota, shared with the API) and is
never cached."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_http_methods

from wovepaper.lib.negotiation import render_page

from . import conflicts
from .api.conflicts import ConflictCheckThrottle


class ConflictForm(forms.Form):
    paper = forms.CharField(
        required=False,
        max_length=64,
        label="Paper (arXiv id)",
        help_text="Its bylines, as matched, are the authors.",
    )
    authors = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        label="Or authors, one a line",
        help_text="Names, ORCID iDs or researcher page addresses.",
    )
    reviewers = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8}),
        label="Candidate reviewers, one a line",
        help_text="Names, ORCID iDs or researcher page addresses.",
    )
    years = forms.IntegerField(
        min_value=1, max_value=conflicts.MAX_YEARS, initial=conflicts.DEFAULT_YEARS
    )

    def clean(self):
        cleaned = super().clean() or {}
        if not (cleaned.get("paper", "").strip() or _lines(cleaned.get("authors", ""))):
            raise forms.ValidationError("Give a paper's arXiv id or at least one author.")
        reviewers = _lines(cleaned.get("reviewers", ""))
        if not reviewers:
            raise forms.ValidationError("Give at least one candidate reviewer.")
        authors = [] if cleaned.get("paper", "").strip() else _lines(cleaned.get("authors", ""))
        try:
            # Counted as typed, before the quota is charged or any name is looked up.
            conflicts.check_counts(len(authors), len(reviewers))
        except conflicts.ConflictInputError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return cleaned


def _asked(request: HttpRequest) -> dict[str, str]:
    """What a link asks the form to hold (a researcher page's "check them for conflicts", a
    paper's authors): the boxes filled, nothing checked until the reader sends it."""
    return {
        name: request.GET[name][:limit]
        for name, limit in (("paper", 64), ("authors", 10_000), ("reviewers", 10_000))
        if request.GET.get(name)
    }


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


@login_required
@require_http_methods(["GET", "POST"])
def conflict_check_page(request: HttpRequest) -> HttpResponse:
    report = None
    problem = ""
    status = 200
    retry_after = None
    form = ConflictForm(request.POST if request.method == "POST" else None, initial=_asked(request))
    if request.method == "POST" and form.is_valid():
        throttle = ConflictCheckThrottle()
        if not throttle.allow_request(request, None):
            problem = "You have used today's checks; try again tomorrow."
            status = 429
            retry_after = throttle.wait()
        else:
            data = form.cleaned_data
            try:
                report = conflicts.conflict_check_request(
                    arxiv_id=data["paper"],
                    author_lines=_lines(data["authors"]),
                    reviewer_lines=_lines(data["reviewers"]),
                    years=data["years"],
                )
            except conflicts.ConflictInputError as exc:
                problem = str(exc)
                status = 400
    elif request.method == "POST":
        status = 400
    context = {
        "form": form,
        "report": report,
        "data": conflicts.conflict_report_data(report, site=settings.SITE_URL) if report else None,
        "problem": problem,
    }
    response = render_page(request, "researchers/conflicts", context, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(int(retry_after + 0.999))
    return response
