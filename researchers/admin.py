from django.contrib import admin

from .models import Researcher, ResearcherExternalId


class ExternalIdInline(admin.TabularInline):
    model = ResearcherExternalId
    extra = 0


@admin.register(Researcher)
class ResearcherAdmin(admin.ModelAdmin):
    list_display = ("display_name", "paper_count", "h_index", "citation_count", "works_count",
                    "merged_into")
    list_filter = ("figures_source",)
    search_fields = ("display_name", "name_key", "=external_ids__value")
    raw_id_fields = ("merged_into",)
    readonly_fields = ("created_at", "modified_at")
    inlines = [ExternalIdInline]
    show_full_result_count = False


@admin.register(ResearcherExternalId)
class ResearcherExternalIdAdmin(admin.ModelAdmin):
    list_display = ("source", "value", "researcher")
    list_filter = ("source",)
    search_fields = ("=value",)
    raw_id_fields = ("researcher",)
