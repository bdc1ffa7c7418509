from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from . import owner_edits
from .byline_cleanup import byline_cleanup_undo
from .curation.admin_views import PERMISSION, CurationAdminMixin
from .models import (
    CurationEntry,
    DistinctPair,
    IdentityConflict,
    MatchReport,
    MatchRun,
    PaperMatchState,
    Researcher,
    ResearcherExternalId,
)


class ExternalIdInline(admin.TabularInline):
    model = ResearcherExternalId
    extra = 0


@admin.register(Researcher)
class ResearcherAdmin(CurationAdminMixin, admin.ModelAdmin):
    list_display = (
        "display_name",
        "paper_count",
        "h_index",
        "citation_count",
        "works_count",
        "merged_into",
    )
    list_filter = ("figures_source",)
    search_fields = ("display_name", "name_key", "=external_ids__value")
    # Ids, not <select>s of every paper and researcher: the form stays bounded at any size.
    raw_id_fields = ("merged_into", "most_cited_paper", "current_institution")
    # Verification follows the claims (accounts), so the history and the claim agree.
    readonly_fields = ("created_at", "modified_at", "verified_by", "verified_at")
    inlines = [ExternalIdInline]
    show_full_result_count = False
    change_list_template = "admin/researchers/researcher/change_list.html"

    def has_view_permission(self, request, obj=None):
        # Curators find records to merge from the list; changing them stays with the change perm.
        return request.user.has_perm(PERMISSION) or super().has_view_permission(request, obj)


@admin.register(ResearcherExternalId)
class ResearcherExternalIdAdmin(admin.ModelAdmin):
    list_display = ("source", "value", "researcher")
    list_filter = ("source",)
    search_fields = ("=value",)
    raw_id_fields = ("researcher",)


@admin.register(PaperMatchState)
class PaperMatchStateAdmin(admin.ModelAdmin):
    """Per paper: what each source said, and the error when a service could not answer; the
    "another paper's record" filter lists the source records set aside as not this paper's."""

    list_display = (
        "paper",
        "status",
        "s2_status",
        "openalex_status",
        "matched_authors",
        "attempts",
        "last_attempt_at",
        "next_attempt_at",
        "short_error",
        "mismatch",
    )
    list_filter = ("status", "s2_status", "openalex_status")
    search_fields = ("=paper__arxiv_id",)
    raw_id_fields = ("paper",)
    readonly_fields = ("last_attempt_at",)
    show_full_result_count = False

    @admin.display(description="last error")
    def short_error(self, obj: PaperMatchState) -> str:
        return obj.last_error[:120]

    def get_object(self, request, object_id, from_field=None):
        # The key is the paper's id through a one-to-one field, whose lookups lack Django's
        # integer-overflow guard: an id past 64 bits raised OverflowError (500) on SQLite.
        if object_id.isdigit() and int(object_id) >= 2**63:
            return None
        return super().get_object(request, object_id, from_field)


@admin.register(IdentityConflict)
class IdentityConflictAdmin(admin.ModelAdmin):
    """The curators' merge queue: where the sources disagree about who someone is."""

    list_display = (
        "kind",
        "status",
        "researcher",
        "other_researcher",
        "s2_id",
        "openalex_id",
        "orcid",
        "paper",
        "name_as_written",
        "created_at",
    )
    list_filter = ("status", "kind")
    search_fields = ("=s2_id", "=openalex_id", "=orcid", "name_as_written")
    raw_id_fields = ("researcher", "other_researcher", "paper")
    readonly_fields = ("created_at",)
    actions = ["mark_dismissed"]
    show_full_result_count = False

    @admin.action(description="Dismiss the selected conflicts", permissions=["change"])
    def mark_dismissed(self, request, queryset):
        updated = queryset.update(status=IdentityConflict.DISMISSED)
        self.message_user(request, f"{updated} conflicts dismissed.")


@admin.register(MatchRun)
class MatchRunAdmin(admin.ModelAdmin):
    """Each matching run; an unreachable service shows here with its message."""

    list_display = (
        "started_at",
        "trigger",
        "status",
        *MatchRun.COUNTS,
        "message",
    )
    list_filter = ("status", "trigger")
    readonly_fields = [f.name for f in MatchRun._meta.fields]

    def has_add_permission(self, request):
        return False


class CuratorViewMixin(admin.ModelAdmin):
    """Read-only for everyone; curators may view even without the model's view permission."""

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm(PERMISSION) or super().has_view_permission(request, obj)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(CurationEntry)
class CurationEntryAdmin(CuratorViewMixin, admin.ModelAdmin):
    """The audit log: who did what to which records, with the before and after states."""

    list_display = ("created_at", "action", "actor", "researcher", "undone_by", "split_link")
    list_filter = ("action",)
    search_fields = ("=researcher__id", "note")
    list_select_related = ("actor", "researcher")
    raw_id_fields = ("researcher", "actor", "undone_by")
    readonly_fields = (
        "created_at",
        "action",
        "actor",
        "researcher",
        "records",
        "note",
        "before",
        "after",
        "undone_by",
        "split_link",
    )
    exclude = ("researchers",)
    show_full_result_count = False
    actions = ["undo_byline_cleanup", "undo_owner_change"]

    def has_curate_permission(self, request) -> bool:
        return request.user.has_perm(PERMISSION)

    @admin.action(
        permissions=["curate"],
        description="Undo the selected changes by researchers (papers removed or added, fields)",
    )
    def undo_owner_change(self, request, queryset):
        """Asks for the public reason first, then undoes each change (researchers.owner_edits)."""
        entries = list(
            queryset.filter(action__in=owner_edits.UNDOABLE, undone_by__isnull=True).order_by("-pk")
        )
        reason = request.POST.get("reason", "").strip()
        if "apply" in request.POST and reason:
            undone = 0
            for entry in entries:
                try:
                    owner_edits.owner_change_undo(
                        entry_id=entry.pk, actor=request.user, reason=reason
                    )
                    undone += 1
                except owner_edits.OwnershipError as exc:
                    self.message_user(request, f"Entry #{entry.pk}: {exc}", messages.WARNING)
            self.message_user(request, f"{undone} change(s) by researchers undone.")
            return None
        if not entries:
            self.message_user(
                request,
                "None of the selected entries is a researcher's change still in force.",
                messages.WARNING,
            )
            return None
        return TemplateResponse(
            request,
            "admin/researchers/owner_undo.html",
            {
                **self.admin_site.each_context(request),
                "title": "Undo changes by researchers",
                "entries": entries,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                "opts": self.model._meta,
            },
        )

    @admin.action(
        permissions=["curate"], description="Undo the selected byline cleanups (clean_bylines)"
    )
    def undo_byline_cleanup(self, request, queryset) -> None:
        undone = 0
        for entry in queryset.filter(
            action__in=[CurationEntry.BYLINE, CurationEntry.NOT_PERSON], undone_by__isnull=True
        ).order_by("-pk"):
            byline_cleanup_undo(entry_id=entry.pk, actor=request.user)
            undone += 1
        self.message_user(request, f"{undone} cleanup entries undone.")

    @admin.display(description="records")
    def records(self, obj: CurationEntry) -> str:
        return format_html_join(
            ", ",
            '<a href="{}">{}</a>',
            (
                (reverse("admin:researchers_researcher_change", args=[r.pk]), str(r))
                for r in obj.researchers.order_by("pk")
            ),
        )

    @admin.display(description="split")
    def split_link(self, obj: CurationEntry) -> str:
        if obj.action != CurationEntry.MERGE or obj.undone_by_id:
            return ""
        return format_html(
            '<a href="{}">Split…</a>', reverse("admin:researchers_curation_split", args=[obj.pk])
        )


@admin.register(DistinctPair)
class DistinctPairAdmin(CuratorViewMixin, admin.ModelAdmin):
    """Pairs curators decided are different people."""

    list_display = ("low", "high", "created_at", "entry")
    raw_id_fields = ("low", "high", "entry")
    list_select_related = ("low", "high")
    show_full_result_count = False


@admin.register(MatchReport)
class MatchReportAdmin(admin.ModelAdmin):
    """Readers' reports; curators decide them from the curation queue (merge, split, move,
    "not the same person", or keep as is with a reason)."""

    list_display = ("pk", "kind", "status", "researcher", "other_researcher", "created_at")
    list_filter = ("status", "kind")
    list_select_related = ("researcher", "other_researcher")
    raw_id_fields = ("reporter", "researcher", "other_researcher", "authorship", "closed_by")
    readonly_fields = ("created_at", "closed_at")
    ordering = ("-created_at",)
