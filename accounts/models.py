from __future__ import annotations

from django.conf import settings
from django.db import models


class Profile(models.Model):
    """What a user chose: fields of interest, digest settings, and how far onboarding went."""

    class Onboarding(models.TextChoices):
        PENDING = "pending", "Not finished"
        SKIPPED = "skipped", "Skipped"
        COMPLETED = "completed", "Completed"

    class Step(models.TextChoices):
        FIELDS = "fields", "Fields of interest"
        RESEARCHERS = "researchers", "Researchers to follow"
        CLAIM = "claim", "Your researcher record"

    class Digest(models.TextChoices):
        NONE = "none", "No email"
        DAILY = "daily", "Daily"
        WEEKLY = "weekly", "Weekly"

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    onboarding = models.CharField(
        max_length=16, choices=Onboarding.choices, default=Onboarding.PENDING
    )
    # Where onboarding resumes, so a user who skipped or left can come back to the same step.
    onboarding_step = models.CharField(max_length=16, choices=Step.choices, default=Step.FIELDS)
    # arXiv category codes, e.g. ["cs.LG", "stat.ML"].
    fields = models.JSONField(default=list, blank=True)
    # Opt-in: onboarding's last step offers it (weekly preselected), settings change it.
    digest_frequency = models.CharField(max_length=8, choices=Digest.choices, default=Digest.NONE)
    last_digest_at = models.DateTimeField(null=True, blank=True)
    # The secret of the reader's private alert feed (/me/alerts/<token>.atom); reset makes a
    # new one and the old URL stops working.
    alert_feed_token = models.CharField(max_length=64, null=True, blank=True, unique=True)  # noqa: DJ001
    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["digest_frequency", "user"], name="profile_digest_idx")]

    def __str__(self) -> str:
        return f"profile of user {self.user_id}"


class Follow(models.Model):
    """A user follows a researcher record (a surviving one: see services.researcher_follow)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="follows"
    )
    researcher = models.ForeignKey(
        "researchers.Researcher", on_delete=models.CASCADE, related_name="follows"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "researcher"], name="follow_unique"),
        ]
        indexes = [
            models.Index(fields=["user", "-created_at"], name="follow_user_created_idx"),
            models.Index(fields=["researcher"], name="follow_researcher_idx"),
        ]

    def __str__(self) -> str:
        return f"user {self.user_id} follows researcher {self.researcher_id}"


class InstitutionFollow(models.Model):
    """A user follows an institution: papers with an author at it join the user's feed and
    digest."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="institution_follows"
    )
    institution = models.ForeignKey(
        "institutions.Institution", on_delete=models.CASCADE, related_name="follows"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "institution"], name="institution_follow_unique"
            ),
        ]
        indexes = [
            models.Index(fields=["user", "-created_at"], name="instfollow_user_created_idx"),
            models.Index(fields=["institution"], name="instfollow_institution_idx"),
        ]

    def __str__(self) -> str:
        return f"user {self.user_id} follows institution {self.institution_id}"


class Claim(models.Model):
    """A user says "this is me" about a researcher record. An ORCID sign-in whose iD the sources
    give the record confirms it at once; any other claim waits for the curators with its
    evidence (accounts.ownership.claim_evidence), and so does one that would give a record a
    second owner or a person a second record. The decision and its note are shown to the
    claimant."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for review"
        CONFIRMED = "confirmed", "Confirmed"
        REJECTED = "rejected", "Rejected"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="claims"
    )
    researcher = models.ForeignKey(
        "researchers.Researcher", on_delete=models.CASCADE, related_name="claims"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    message = models.TextField(blank=True, help_text="What the user wrote to support the claim.")
    # How a confirmed claim was decided: the ORCID tie, or the curators (Researcher.VERIFICATIONS).
    method = models.CharField(max_length=16, blank=True)
    # What the curators weigh, gathered when the claim was made
    # (accounts.ownership.claim_evidence):
    # {"orcid_tie": bool, "orcid_works": [...], "email_domains": [...], "conflicts": [...]}.
    evidence = models.JSONField(default=dict, blank=True)
    # The curators' words to the claimant about their decision, shown to the claimant only.
    decision_note = models.TextField(blank=True, max_length=2000)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "researcher"], name="claim_unique"),
        ]
        indexes = [
            models.Index(fields=["status", "created_at"], name="claim_status_idx"),
            # A record's owner (its confirmed claim) and the claims competing for it.
            models.Index(fields=["researcher", "status"], name="claim_researcher_idx"),
        ]

    def __str__(self) -> str:
        return f"user {self.user_id} claims researcher {self.researcher_id} ({self.status})"


class SentDigest(models.Model):
    """One digest email sent for one period; the unique key is what makes a retry a no-op."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sent_digests"
    )
    # "daily:2026-11-29" or "weekly:2026-W48".
    period_key = models.CharField(max_length=32)
    paper_count = models.PositiveIntegerField(default=0)
    sent_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "period_key"], name="sentdigest_unique"),
        ]

    def __str__(self) -> str:
        return f"digest {self.period_key} to user {self.user_id}"


# The library's models live in accounts.library.models; imported here so that Django registers
# them under this app, as they always were.
from .library.models import (  # noqa: E402, F401
    LibraryImport,
    ReadingList,
    RecommendationDismissal,
    SavedPaper,
    SavedSearch,
    SearchAlert,
)
