from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.template.loader import render_to_string
from rest_framework.authtoken.admin import TokenAdmin as RestFrameworkTokenAdmin
from rest_framework.authtoken.models import TokenProxy

from .models import Claim, Follow, Profile, SentDigest
from .ownership.reviews import ClaimError, claim_review, claim_review_blockers


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


class ClaimDecisionForm(forms.ModelForm):
    """The curators' decision: confirm or reject, with the note the claimant reads."""

    decision = forms.ChoiceField(
        choices=[("", "Keep waiting"), ("confirm", "Confirm"), ("reject", "Reject")],
        required=False,
    )

    class Meta:
        model = Claim
        fields = ["decision_note"]

    def clean(self):
        cleaned = super().clean() or {}
        decision = cleaned.get("decision")
        if decision == "confirm":
            blockers = claim_review_blockers(claim=self.instance, confirm=True)
            if blockers:
                raise forms.ValidationError(blockers)
        return cleaned


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    """The curators' queue of claims: waiting ones first, each with its evidence and, where it
    competes with another claim, both sides."""

    form = ClaimDecisionForm
    list_display = ("user", "researcher", "status", "method", "evidence_summary", "created_at")
    list_filter = ("status", "method")
    search_fields = ("user__email", "researcher__display_name")
    raw_id_fields = ("user", "researcher")
    list_select_related = ("user", "researcher")
    show_full_result_count = False
    readonly_fields = (
        "user",
        "researcher",
        "status",
        "method",
        "message",
        "evidence_panel",
        "reviewed_by",
        "reviewed_at",
        "created_at",
    )
    fields = (*readonly_fields, "decision", "decision_note")
    actions = ["confirm_claims", "reject_claims"]

    def get_queryset(self, request):
        return super().get_queryset(request).order_by("-status", "created_at")

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(description="evidence")
    def evidence_summary(self, claim: Claim) -> str:
        ev = claim.evidence or {}
        parts = []
        if ev.get("orcid_tie"):
            parts.append("ORCID tie")
        if ev.get("orcid_works"):
            parts.append(f"{len(ev['orcid_works'])} ORCID work(s) match")
        if ev.get("email_domains"):
            parts.append("e-mail domain matches")
        if ev.get("conflicts"):
            parts.append(f"{len(ev['conflicts'])} competing claim(s)")
        return "; ".join(parts) or "none"

    @admin.display(description="evidence")
    def evidence_panel(self, claim: Claim) -> str:
        others = Claim.objects.filter(
            pk__in=[c["claim"] for c in (claim.evidence or {}).get("conflicts", [])]
        ).select_related("researcher", "user")
        return render_to_string(
            "admin/accounts/claim_evidence.html",
            {"claim": claim, "evidence": claim.evidence or {}, "others": list(others)},
        )

    def save_model(self, request, obj, form, change):
        decision = form.cleaned_data.get("decision")
        if not decision:
            Claim.objects.filter(pk=obj.pk).update(decision_note=obj.decision_note)
            return
        try:
            claim_review(
                claim=obj,
                reviewer=request.user,
                confirm=decision == "confirm",
                note=obj.decision_note,
            )
        except ClaimError as exc:
            self.message_user(request, str(exc), messages.ERROR)

    def _review(self, request, queryset, *, confirm: bool) -> None:
        if not request.user.is_staff:
            self.message_user(request, "Only staff can review claims.", messages.ERROR)
            return
        done = 0
        for claim in queryset:
            try:
                claim_review(claim=claim, reviewer=request.user, confirm=confirm)
                done += 1
            except ClaimError as exc:
                # A competing claim: decided one by one, on its page, with both sides shown.
                self.message_user(request, f"Claim #{claim.pk}: {exc}", messages.WARNING)
        self.message_user(request, f"{done} claim(s) {'confirmed' if confirm else 'rejected'}.")

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
