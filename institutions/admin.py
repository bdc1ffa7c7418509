from django.contrib import admin

from .models import AuthorshipInstitution, Institution


@admin.register(Institution)
class InstitutionAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "ror_id",
        "country_code",
        "type",
        "paper_count",
        "researcher_count",
        "ror_status",
        "ror_checked_at",
    )
    list_filter = ("country_code", "type", "ror_status")
    search_fields = ("name", "=ror_id", "=openalex_id")
    readonly_fields = ("created_at", "modified_at")
    show_full_result_count = False


@admin.register(AuthorshipInstitution)
class AuthorshipInstitutionAdmin(admin.ModelAdmin):
    list_display = ("authorship", "institution", "paper")
    raw_id_fields = ("authorship", "institution", "paper")
    show_full_result_count = False
