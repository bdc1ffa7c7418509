"""Curation screens inside the Researcher admin: the review queue, merge (preview, confirm),
split, move one authorship, and "not the same person".

Views only check access, validate a form and call `researchers.curation.decisions`; the admin site's
`admin_view` sends anonymous and non-staff users to the admin login, and staff without
`researchers.curate_researcher` get 403.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse

from papers.models import MATCH_CERTAIN, Authorship
from wovepaper.lib.paging import page_number
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from .. import selectors
from ..models import CurationEntry, MatchReport, Researcher
from . import decisions, queue, reports, same_person

PERMISSION = "researchers.curate_researcher"
# The uncertain links' queue: one page is four queries, whatever the page.
UNCERTAIN_PER_PAGE = 50


def _ids(text: str) -> list[int]:
    out = []
    for part in text.replace(" ", ",").split(","):
        if part.strip().isdigit():
            out.append(int(part))
    return list(dict.fromkeys(out))


class MergeForm(forms.Form):
    survivor = forms.IntegerField(min_value=1)
    folded = forms.CharField(help_text="Ids of the records to fold in, separated by commas.")
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def clean_folded(self) -> list[int]:
        ids = _ids(self.cleaned_data["folded"])
        if not ids:
            raise forms.ValidationError("Give at least one record id to fold in.")
        return ids


class MoveForm(forms.Form):
    authorship = forms.IntegerField(min_value=1)
    to = forms.IntegerField(min_value=1, label="Move to researcher id")
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class PairForm(forms.Form):
    first = forms.IntegerField(min_value=1)
    second = forms.IntegerField(min_value=1)
    note = forms.CharField(required=False)


class CurationAdminMixin(admin.ModelAdmin):
    """Mixed into ResearcherAdmin: adds the curation URLs under /admin/researchers/researcher/."""

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("curation/", wrap(self.curation_queue_view), name="researchers_curation"),
            path(
                "curation/merge/", wrap(self.curation_merge_view), name="researchers_curation_merge"
            ),
            path(
                "curation/split/<int:entry_id>/",
                wrap(self.curation_split_view),
                name="researchers_curation_split",
            ),
            path("curation/move/", wrap(self.curation_move_view), name="researchers_curation_move"),
            path(
                "curation/distinct/",
                wrap(self.curation_distinct_view),
                name="researchers_curation_distinct",
            ),
            path(
                "curation/uncertain/",
                wrap(self.curation_uncertain_view),
                name="researchers_curation_uncertain",
            ),
            path(
                "curation/uncertain/<int:authorship_id>/",
                wrap(self.curation_uncertain_decide_view),
                name="researchers_curation_uncertain_decide",
            ),
            path(
                "curation/reports/<int:report_id>/decline/",
                wrap(self.curation_report_decline_view),
                name="researchers_curation_report_decline",
            ),
            *super().get_urls(),
        ]

    def _require_curator(self, request: AuthenticatedHttpRequest) -> None:
        if not request.user.has_perm(PERMISSION):
            raise PermissionDenied("Curating researchers needs the curate_researcher permission.")

    def _context(self, request: AuthenticatedHttpRequest, title: str, **extra) -> dict:
        return {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": title,
            **extra,
        }

    def _done(
        self, request: AuthenticatedHttpRequest, entry: CurationEntry, message: str
    ) -> HttpResponse:
        """After an action: say what was done and show the audit entry it wrote."""
        messages.success(request, message)
        return HttpResponseRedirect(
            reverse("admin:researchers_curationentry_change", args=[entry.pk])
        )

    def curation_queue_view(self, request: AuthenticatedHttpRequest) -> HttpResponse:
        self._require_curator(request)
        prefix = request.GET.get("q", "").strip()[:100]
        found = queue.curation_clusters(prefix=prefix)
        proposals = same_person.same_person_proposals(
            researcher_ids=queue.proposal_candidates(prefix=prefix)
        )
        return TemplateResponse(
            request,
            "admin/researchers/curation/queue.html",
            self._context(
                request,
                "Same-name clusters to review",
                clusters=found,
                proposals=proposals,
                reports=reports.reports_open(),
                q=prefix,
                weights=queue.WEIGHTS,
            ),
        )

    def curation_merge_view(self, request: AuthenticatedHttpRequest) -> HttpResponse:
        self._require_curator(request)
        if request.method == "POST":
            form = MergeForm(request.POST)
        else:
            ids = _ids(request.GET.get("ids", ""))
            survivor = request.GET.get("survivor") or (ids[0] if ids else None)
            form = MergeForm(
                {
                    "survivor": survivor,
                    "folded": ",".join(str(i) for i in ids if str(i) != str(survivor)),
                }
            )
        plan = None
        error = ""
        if form.is_valid():
            survivor_id, folded_ids = form.cleaned_data["survivor"], form.cleaned_data["folded"]
            try:
                plan = decisions.merge_plan(survivor_id=survivor_id, folded_ids=folded_ids)
                if request.method == "POST" and "confirm" in request.POST:
                    entry = decisions.researchers_merge(
                        survivor_id=survivor_id,
                        folded_ids=folded_ids,
                        actor=request.user,
                        note=form.cleaned_data["note"],
                    )
                    return self._done(
                        request,
                        entry,
                        f"Merged {len(folded_ids)} record(s) "
                        f"into {plan.survivor} (entry #{entry.pk}).",
                    )
            except decisions.CurationError as exc:
                error = str(exc)
        return TemplateResponse(
            request,
            "admin/researchers/curation/merge.html",
            self._context(request, "Merge researcher records", form=form, plan=plan, error=error),
        )

    def curation_split_view(self, request: AuthenticatedHttpRequest, entry_id: int) -> HttpResponse:
        self._require_curator(request)
        entry = get_object_or_404(CurationEntry, pk=entry_id)
        error = ""
        if request.method == "POST":
            try:
                split = decisions.merge_split(
                    entry_id=entry.pk, actor=request.user, note=request.POST.get("note", "")
                )
            except decisions.CurationError as exc:
                error = str(exc)
            else:
                return self._done(request, split, f"Merge #{entry.pk} split (entry #{split.pk}).")
        blockers = decisions.merge_split_blockers(entry)
        records = Researcher.objects.filter(
            pk__in=[entry.after.get("survivor"), *entry.after.get("folded", [])]
        ).order_by("pk")
        return TemplateResponse(
            request,
            "admin/researchers/curation/split.html",
            self._context(
                request,
                f"Split merge #{entry.pk}",
                entry=entry,
                blockers=blockers,
                error=error,
                records=records,
            ),
        )

    def curation_move_view(self, request: AuthenticatedHttpRequest) -> HttpResponse:
        self._require_curator(request)
        data = request.POST if request.method == "POST" else request.GET
        form = MoveForm(data) if data.get("authorship") else MoveForm()
        authorship = target = None
        error = ""
        if form.is_bound and form.is_valid():
            authorship = (
                Authorship.objects.select_related("paper", "researcher")
                .filter(pk=form.cleaned_data["authorship"])
                .first()
            )
            target = Researcher.objects.filter(pk=form.cleaned_data["to"]).first()
            if request.method == "POST" and "confirm" in request.POST:
                try:
                    entry = decisions.authorship_move(
                        authorship_id=form.cleaned_data["authorship"],
                        to_researcher_id=form.cleaned_data["to"],
                        actor=request.user,
                        note=form.cleaned_data["note"],
                    )
                except decisions.CurationError as exc:
                    error = str(exc)
                else:
                    return self._done(request, entry, f"Authorship moved (entry #{entry.pk}).")
        return TemplateResponse(
            request,
            "admin/researchers/curation/move.html",
            self._context(
                request,
                "Move one authorship",
                form=form,
                authorship=authorship,
                target=target,
                error=error,
            ),
        )

    def curation_uncertain_view(self, request: AuthenticatedHttpRequest) -> HttpResponse:
        """The queue of uncertain links (below Authorship's certain confidence), least sure
        first, each with its evidence and the two decisions."""
        self._require_curator(request)
        # Deeper than the public lists: the queue is worked through, not browsed.
        page = page_number(request, max_page=10_000)
        links, total = selectors.uncertain_links(
            limit=UNCERTAIN_PER_PAGE, offset=(page - 1) * UNCERTAIN_PER_PAGE
        )
        return TemplateResponse(
            request,
            "admin/researchers/curation/uncertain.html",
            self._context(
                request,
                "Uncertain links to check",
                links=links,
                total=total,
                page=page,
                previous_page=page - 1 if page > 1 else None,
                next_page=page + 1 if page * UNCERTAIN_PER_PAGE < total else None,
                certain=MATCH_CERTAIN,
            ),
        )

    def curation_uncertain_decide_view(
        self, request: AuthenticatedHttpRequest, authorship_id: int
    ) -> HttpResponse:
        """Confirm an uncertain link or take the paper off the record; either writes an audit
        entry and pins the byline name so that matching leaves the decision as it is."""
        self._require_curator(request)
        back = reverse("admin:researchers_curation_uncertain")
        page = request.POST.get("page", "")
        if page.isdigit():
            back += f"?page={page}"
        if request.method != "POST":
            return HttpResponseRedirect(back)
        decide = {"confirm": decisions.authorship_confirm, "unlink": decisions.authorship_unlink}
        action = decide.get(request.POST.get("decision", ""))
        if action is None:
            messages.error(request, "Choose confirm or unlink.")
            return HttpResponseRedirect(back)
        try:
            entry = action(
                authorship_id=authorship_id,
                actor=request.user,
                note=request.POST.get("note", ""),
            )
        except decisions.CurationError as exc:
            messages.error(request, str(exc))
        else:
            name = entry.before.get("name", "")
            done = "confirmed" if entry.action == CurationEntry.CONFIRM else "taken off the record"
            messages.success(request, f"{name}: link {done} (entry #{entry.pk}).")
        return HttpResponseRedirect(back)

    def curation_report_decline_view(
        self, request: AuthenticatedHttpRequest, report_id: int
    ) -> HttpResponse:
        """Close a reader's report without changing the records; the reader sees the reason."""
        self._require_curator(request)
        report = MatchReport.objects.filter(pk=report_id, status=MatchReport.OPEN).first()
        if request.method == "POST" and report is not None:
            try:
                reports.report_decline(report=report, reason=request.POST.get("reason", ""))
            except reports.ReportError as exc:
                messages.error(request, str(exc))
            else:
                messages.success(request, f"Report #{report.pk} closed; the records stay.")
        return HttpResponseRedirect(reverse("admin:researchers_curation"))

    def curation_distinct_view(self, request: AuthenticatedHttpRequest) -> HttpResponse:
        self._require_curator(request)
        if request.method != "POST":
            return HttpResponseRedirect(reverse("admin:researchers_curation"))
        form = PairForm(request.POST)
        if not form.is_valid():
            messages.error(request, "Give the two record ids.")
        else:
            try:
                entry = decisions.researchers_mark_distinct(
                    first_id=form.cleaned_data["first"],
                    second_id=form.cleaned_data["second"],
                    actor=request.user,
                    note=form.cleaned_data["note"],
                )
            except decisions.CurationError as exc:
                messages.error(request, str(exc))
            else:
                messages.success(
                    request,
                    "Marked as not the same person." if entry else "That pair was already marked.",
                )
        back = request.POST.get("next", "")
        if not back.startswith("/admin/"):
            back = reverse("admin:researchers_curation")
        return HttpResponseRedirect(back)
