"""The reader's library: lists and saved papers with notes, saved searches and their alerts,
"not relevant" marks. Registered under the `accounts` app (accounts/models.py imports them), with
their tables' names as they were."""

from __future__ import annotations

from django.conf import settings
from django.db import models


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
    kept as SearchAlert rows (accounts.library.alerts) and shown in the feed, the digest and the
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
    (accounts.library.recommendations), so one dismissal teaches the ranking about its
    neighbours."""

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


class LibraryImport(models.Model):
    """A file a reader imports into a list, read by a worker (accounts.library_import_run) and
    followed on its own page, as a reference manager's import is. The file's text is kept until
    it is read, then dropped; the report stays, for the page."""

    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
    STATUSES = [(QUEUED, "queued"), (RUNNING, "running"), (DONE, "done"), (FAILED, "failed")]

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reading_list = models.ForeignKey(ReadingList, on_delete=models.CASCADE, related_name="+")
    filename = models.CharField(max_length=255, blank=True)
    status = models.CharField(max_length=8, choices=STATUSES, default=QUEUED)
    text = models.TextField(blank=True)
    report = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "-created_at"], name="libraryimport_user_idx")]

    def __str__(self) -> str:
        return f"import {self.pk} of {self.filename!r} ({self.status})"

    @property
    def is_pending(self) -> bool:
        return self.status in (self.QUEUED, self.RUNNING)
