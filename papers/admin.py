from django.contrib import admin

from .harvest.lock import harvest_runs_stale
from .models import MATCH_CERTAIN, Authorship, HarvestRun, Paper, PaperCategory, RejectedRecord


class AuthorshipInline(admin.TabularInline):
    model = Authorship
    extra = 0
    fields = ("position", "name", "affiliation", "researcher", "match_method", "match_confidence")
    readonly_fields = ("match_method", "match_confidence")
    raw_id_fields = ("researcher",)
    ordering = ("position",)


@admin.register(Paper)
class PaperAdmin(admin.ModelAdmin):
    list_display = (
        "arxiv_id",
        "title",
        "primary_category",
        "published",
        "updated",
        "cited_by_count",
    )
    list_filter = ("primary_category", "is_withdrawn", "is_deleted")
    search_fields = ("=arxiv_id", "title", "doi")
    date_hierarchy = "published"
    readonly_fields = ("source_hash", "created_at", "modified_at")
    inlines = [AuthorshipInline]
    show_full_result_count = False


class MatchConfidenceFilter(admin.SimpleListFilter):
    """The curators' list of uncertain links: read through a partial index of those rows."""

    title = "match"
    parameter_name = "match"

    def lookups(self, request, model_admin):
        return [("uncertain", f"uncertain (confidence below {MATCH_CERTAIN})")]

    def queryset(self, request, queryset):
        if self.value() == "uncertain":
            return queryset.filter(match_confidence__lt=MATCH_CERTAIN)
        return queryset


@admin.register(Authorship)
class AuthorshipAdmin(admin.ModelAdmin):
    list_display = ("name", "paper", "position", "researcher", "match_method", "match_confidence")
    list_filter = (MatchConfidenceFilter,)
    search_fields = ("name", "=paper__arxiv_id")
    raw_id_fields = ("paper", "researcher")
    list_select_related = ("paper", "researcher")
    show_full_result_count = False


@admin.register(PaperCategory)
class PaperCategoryAdmin(admin.ModelAdmin):
    list_display = ("paper", "code", "is_primary", "published")
    list_filter = ("is_primary",)
    search_fields = ("=code", "=paper__arxiv_id")
    raw_id_fields = ("paper",)
    show_full_result_count = False


@admin.register(RejectedRecord)
class RejectedRecordAdmin(admin.ModelAdmin):
    list_display = ("source", "record_key", "reason", "last_seen")
    list_filter = ("source",)
    search_fields = ("record_key", "reason")
    readonly_fields = ("first_seen", "last_seen")


class HarvestLivenessFilter(admin.SimpleListFilter):
    title = "liveness"
    parameter_name = "liveness"

    def lookups(self, request, model_admin):
        return [("stale", "stale (heartbeat stopped)"), ("alive", "running, heartbeat live")]

    def queryset(self, request, queryset):
        if self.value() == "stale":
            return queryset.filter(pk__in=harvest_runs_stale().values("pk"))
        if self.value() == "alive":
            return queryset.filter(
                status=HarvestRun.Status.RUNNING, heartbeat_at__gte=HarvestRun.stale_before()
            )
        return queryset


@admin.register(HarvestRun)
class HarvestRunAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "set_spec",
        "metadata_prefix",
        "from_date",
        "until_date",
        "state",
        *HarvestRun.COUNTS,
        "started_at",
        "heartbeat_at",
        "finished_at",
    )
    list_filter = ("status", HarvestLivenessFilter, "metadata_prefix", "set_spec")
    date_hierarchy = "started_at"
    ordering = ("-started_at",)
    # Runs are written by the harvester only; the admin shows them.
    readonly_fields = [f.name for f in HarvestRun._meta.fields]
    show_full_result_count = False

    def has_add_permission(self, request):
        return False

    @admin.display(description="status", ordering="status")
    def state(self, run: HarvestRun) -> str:
        """A run still marked running whose heartbeat stopped is dead, whatever its status says:
        resume it (`harvest_arxiv --resume N`; papers.harvest_resume_stale does it on its own)."""
        if run.is_stale:
            return "stale: heartbeat stopped"
        return run.get_status_display()
