"""Readers report a wrong match in place: from a paper's byline or a researcher page."""

from __future__ import annotations

import re

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from papers.models import Authorship, Paper
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from ..models import MatchReport, Researcher
from .reports import ReportError, ReportThrottled, match_report_create

RESEARCHER_IN_TEXT = re.compile(r"(?:researchers/)?(\d{1,18})")


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and len(value) <= 18 else None


class MatchReportForm(forms.Form):
    kind = forms.ChoiceField(choices=MatchReport.KINDS, widget=forms.RadioSelect)
    researcher = forms.IntegerField(required=False, widget=forms.HiddenInput, min_value=1)
    authorship = forms.IntegerField(required=False, min_value=1)
    arxiv_id = forms.CharField(
        required=False,
        max_length=64,
        label='Which paper, for "not by this person": its arXiv id',
    )
    other = forms.CharField(
        required=False,
        max_length=300,
        label="The other record",
        help_text="Its address on this site (e.g. /researchers/123-jane-doe) or its number.",
    )
    note = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Anything that helps a curator (optional)",
    )

    def clean_other(self) -> int | None:
        text = self.cleaned_data.get("other", "").strip()
        if not text:
            return None
        found = RESEARCHER_IN_TEXT.search(text)
        if not found:
            raise forms.ValidationError("Give the other record's address or number.")
        return int(found.group(1))


@login_required
@require_http_methods(["GET", "POST"])
def match_report(request: AuthenticatedHttpRequest) -> HttpResponse:
    """GET: the form, filled from the link that led here; POST: file the report."""
    source = request.POST if request.method == "POST" else request.GET
    researcher_id, paper_id = _int(source.get("researcher")), _int(source.get("paper"))
    researcher = (
        Researcher.objects.filter(pk=researcher_id, merged_into__isnull=True).first()
        if researcher_id is not None
        else None
    )
    paper = Paper.objects.filter(pk=paper_id).first() if paper_id is not None else None
    # From a paper: its linked byline names to choose from (a bounded list: one paper's byline).
    byline = (
        list(
            Authorship.objects.filter(paper=paper, researcher__isnull=False)
            .select_related("researcher")
            .order_by("position")
        )
        if paper
        else []
    )
    if request.method == "POST":
        form = MatchReportForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            _resolve_byline_slot(data)
            try:
                match_report_create(
                    user=request.user,
                    kind=data["kind"],
                    researcher_id=data["researcher"],
                    other_researcher_id=data["other"],
                    authorship_id=data["authorship"],
                    note=data["note"],
                )
            except ReportThrottled as exc:
                form.add_error(None, str(exc))
                return _render(request, form, researcher, paper, byline, status=429)
            except ReportError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(
                    request,
                    "Thank you: a curator will look at it. Its outcome will show on your "
                    "account page.",
                )
                return redirect("accounts:settings")
        return _render(request, form, researcher, paper, byline, status=400)
    initial = {
        "kind": source.get("kind") or (MatchReport.NOT_BY if paper else ""),
        "researcher": researcher.pk if researcher else "",
        "authorship": _int(source.get("authorship")),
        "other": source.get("other", ""),
    }
    return _render(request, MatchReportForm(initial=initial), researcher, paper, byline)


def _resolve_byline_slot(data: dict) -> None:
    """A "not by" report names a byline slot: chosen on the paper page (the authorship, whose
    record it is), or typed as an arXiv id on the researcher page (this record's slot there)."""
    if data["kind"] != MatchReport.NOT_BY:
        return
    if data["authorship"]:
        data["researcher"] = (
            Authorship.objects.filter(pk=data["authorship"])
            .values_list("researcher_id", flat=True)
            .first()
        ) or data["researcher"]
    elif data["arxiv_id"] and data["researcher"]:
        data["authorship"] = (
            Authorship.objects.filter(
                paper__arxiv_id=data["arxiv_id"].strip().removeprefix("arXiv:"),
                researcher_id=data["researcher"],
            )
            .values_list("pk", flat=True)
            .first()
        )


def _render(request, form, researcher, paper, byline, *, status: int = 200) -> HttpResponse:
    return render(
        request,
        "researchers/report.html",
        {"form": form, "researcher": researcher, "paper": paper, "byline": byline},
        status=status,
    )
