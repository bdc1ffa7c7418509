from __future__ import annotations

from django.contrib import admin, messages
from rest_framework.authtoken.admin import TokenAdmin as RestFrameworkTokenAdmin
from rest_framework.authtoken.models import TokenProxy

from .models import Claim, Follow, Profile, SentDigest
from .services import claim_review


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ("user", "onboarding", "digest_frequency", "last_digest_at", "created_at")
    list_filter = ("onboarding", "digest_frequency")
    search_fields = ("user__email",)
    raw_id_fields = ("user",)
    show_full_result_count = False


@admin.register(Follow)
class FollowAdmin(admin.ModelAdmin):
    list_display = ("user", "researcher", "created_at")
    search_fields = ("user__email",)
    raw_id_fields = ("user", "researcher")
    show_full_result_count = False


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = ("user", "researcher", "status", "created_at", "reviewed_by", "reviewed_at")
    list_filter = ("status",)
    search_fields = ("user__email", "researcher__display_name")
    raw_id_fields = ("user", "researcher")
    readonly_fields = ("reviewed_by", "reviewed_at", "created_at")
    actions = ["confirm_claims", "reject_claims"]

    def _review(self, request, queryset, *, confirm: bool) -> None:
        if not request.user.is_staff:
            self.message_user(request, "Only staff can review claims.", messages.ERROR)
            return
        for claim in queryset.select_related("researcher"):
            claim_review(claim=claim, reviewer=request.user, confirm=confirm)
        self.message_user(
            request, f"{queryset.count()} claim(s) {'confirmed' if confirm else 'rejected'}."
        )

    @admin.action(description="Confirm the selected claims", permissions=["change"])
    def confirm_claims(self, request, queryset):
        self._review(request, queryset, confirm=True)

    @admin.action(description="Reject the selected claims", permissions=["change"])
    def reject_claims(self, request, queryset):
        self._review(request, queryset, confirm=False)


@admin.register(SentDigest)
class SentDigestAdmin(admin.ModelAdmin):
    list_display = ("user", "period_key", "paper_count", "sent_at")
    search_fields = ("user__email", "period_key")
    raw_id_fields = ("user",)
    show_full_result_count = False


# DRF's token admin offers every account in a <select>: unbounded with many readers.
admin.site.unregister(TokenProxy)


@admin.register(TokenProxy)
class TokenAdmin(RestFrameworkTokenAdmin):
    raw_id_fields = ("user",)
