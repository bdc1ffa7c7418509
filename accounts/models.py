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
    evidence (accounts.claim_evidence), and so does one that would give a record a second
    owner or a person a second record. The decision and its note are shown to the claimant."""

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
    # What the curators weigh, gathered when the claim was made (accounts.claim_evidence):
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


class ReadingList(models.Model):
    """A reader's named list of saved papers. "Reading list" is made on first use; a list is
    private until the reader shares it, and a shared list is read through its unguessable
    token alone (secrets.token_urlsafe), which unsharing clears, so an old link stops working."""

    DEFAULT_NAME = "Reading list"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reading_lists"
    )
    name = models.CharField(max_length=100)
    share_token = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    shared_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "name"], name="readinglist_user_name_unique"),
            models.UniqueConstraint(fields=["share_token"], name="readinglist_share_unique"),
        ]
        indexes = [models.Index(fields=["user", "created_at"], name="readinglist_user_idx")]

    def __str__(self) -> str:
        return f"list {self.name!r} of user {self.user_id}"

    @property
    def is_shared(self) -> bool:
        return bool(self.share_token)


class SavedPaper(models.Model):
    """A paper in a reader's list, with the reader's note on it."""

    # Indexed by the (list, paper) constraint and the (list, -created_at) index.
    reading_list = models.ForeignKey(
        ReadingList, on_delete=models.CASCADE, related_name="saved", db_index=False
    )
    # Its own index answers a page's save controls: which of its papers the reader saved.
    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="+")
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    note_updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["reading_list", "paper"], name="savedpaper_list_paper_unique"
            ),
        ]
        indexes = [
            # A list's page, newest saved first.
            models.Index(fields=["reading_list", "-created_at", "-id"], name="savedpaper_list_idx"),
        ]

    def __str__(self) -> str:
        return f"paper {self.paper_id} in list {self.reading_list_id}"


class SavedSearch(models.Model):
    """A search a reader saved as it stood (words, mode, filters): the new papers it finds are
    kept as SearchAlert rows (accounts.alerts) and shown in the feed, the digest and the
    reader's private alert feed."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_searches"
    )
    query = models.CharField(max_length=300)
    # "hybrid", "keyword" or "semantic", as the search page's `mode`.
    mode = models.CharField(max_length=16, default="hybrid")
    category = models.CharField(max_length=32, blank=True)
    date_from = models.DateField(null=True, blank=True)
    date_to = models.DateField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the alerts last looked for new papers (null: never yet).
    checked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["user", "created_at"], name="savedsearch_user_idx"),
        ]

    def __str__(self) -> str:
        return f"search {self.query!r} of user {self.user_id}"


class SearchAlert(models.Model):
    """A new paper a saved search found. Unique per (search, paper): a paper is announced once
    per search, however many sweeps find it."""

    saved_search = models.ForeignKey(
        SavedSearch, on_delete=models.CASCADE, related_name="alerts", db_index=False
    )
    # The search's reader, kept here so that a reader's newest alerts across all their
    # searches are one range of the (user, -found_at) index (the feed, the digest).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="+")
    found_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["saved_search", "paper"], name="searchalert_search_paper_unique"
            ),
        ]
        indexes = [
            models.Index(
                fields=["saved_search", "-found_at", "-id"], name="searchalert_search_idx"
            ),
            models.Index(fields=["user", "-found_at", "-id"], name="searchalert_user_idx"),
        ]

    def __str__(self) -> str:
        return f"paper {self.paper_id} found by search {self.saved_search_id}"


class RecommendationDismissal(models.Model):
    """A paper the reader marked "not relevant" among the papers recommended to them: it is not
    recommended again, and its vector counts against the papers close to it
    (accounts.recommendations), so one dismissal teaches the ranking about its neighbours."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "paper"], name="recommendationdismissal_unique"
            ),
        ]
        indexes = [
            # The reader's newest dismissals, whose vectors weigh on the ranking.
            models.Index(fields=["user", "-created_at", "-id"], name="recdismissal_user_idx"),
        ]

    def __str__(self) -> str:
        return f"paper {self.paper_id} not relevant to user {self.user_id}"
