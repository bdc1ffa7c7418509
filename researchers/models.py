from __future__ import annotations

from django.conf import settings
from django.db import models
from slugify import slugify


class Researcher(models.Model):
    """A researcher identity from the external sources; several may share a name (homonyms)."""

    display_name = models.CharField(max_length=255)
    # Lower-case, accents folded, punctuation dropped: the key for "same name" lookups.
    name_key = models.CharField(max_length=255, db_index=True, blank=True)
    slug = models.SlugField(max_length=96, blank=True)
    h_index = models.PositiveIntegerField(null=True, blank=True)
    citation_count = models.PositiveIntegerField(null=True, blank=True)
    works_count = models.PositiveIntegerField(null=True, blank=True)
    figures_source = models.CharField(max_length=32, blank=True)
    figures_updated_at = models.DateTimeField(null=True, blank=True)
    # Page figures maintained by matching (researchers.page_figures), so that a researcher with
    # 2,000 papers renders with the same few queries as one with 2. Never computed per request.
    paper_count = models.PositiveIntegerField(default=0)
    # {"first": n, "middle": n, "last": n, "sole": n} over the papers where every author is matched;
    # `position_basis` is how many papers that is (the "X of Y" line: X = basis, Y = paper_count).
    position_counts = models.JSONField(default=dict, blank=True)
    position_basis = models.PositiveIntegerField(default=0)
    # {"cs.LG": n, ...}: papers here per arXiv category (every category of each paper).
    field_counts = models.JSONField(default=dict, blank=True)
    # Most cited paper here, and the citation total over the papers that have a count.
    most_cited_paper = models.ForeignKey(
        "papers.Paper", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    cited_papers_count = models.PositiveIntegerField(default=0)
    citations_here = models.PositiveIntegerField(default=0)
    # [{"id": researcher id, "name": display name, "slug": url slug, "count": shared papers}, ...]
    # the most frequent co-authors, for the co-author network.
    coauthors = models.JSONField(default=list, blank=True)
    stats_updated_at = models.DateTimeField(null=True, blank=True)
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="merged_records"
    )
    # False for a record whose source entry names no person ("Astronomy", "UK.", "A. Building":
    # pieces of an address a source read as an author; papers.nonpersons). The record and its
    # history stay, but no list, search, graph, count, feed, sitemap or queue shows it.
    is_person = models.BooleanField(default=True)
    # The person's own page: verified by their ORCID sign-in or by the curators (a confirmed
    # accounts.Claim, written through researchers.verification), and what the owner set on it
    # (researchers.owner_edits). The sources' records (ResearcherExternalId) are never edited
    # by the owner.
    VERIFIED_ORCID = "orcid"
    VERIFIED_CURATORS = "curators"
    VERIFICATIONS = [(VERIFIED_ORCID, "ORCID"), (VERIFIED_CURATORS, "the curators")]
    verified_by = models.CharField(max_length=16, choices=VERIFICATIONS, blank=True)
    verified_at = models.DateTimeField(null=True, blank=True)
    homepage = models.URLField(max_length=500, blank=True)
    # The owner's choice among the institutions (ROR); else the page shows the affiliation on
    # their newest paper that lists one.
    current_institution = models.ForeignKey(
        "institutions.Institution",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # The owner hid the page from the researcher lists and search; the page, the papers and
    # the bylines stay public as printed.
    hidden = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["-paper_count", "id"], name="researcher_papers_idx"),
            models.Index(fields=["-h_index", "id"], name="researcher_hindex_idx"),
            models.Index(fields=["merged_into"], name="researcher_merged_idx"),
            models.Index(fields=["figures_updated_at", "id"], name="researcher_figures_idx"),
            # The search engine's periodic catch-up reads what changed since its last round.
            models.Index(fields=["modified_at"], name="researcher_modified_idx"),
        ]
        permissions = [("curate_researcher", "Can merge, split and re-attribute researchers")]

    def __str__(self) -> str:
        return f"{self.display_name} ({self.pk})"

    def save(self, *args, **kwargs):
        if not self.slug:
            self.slug = slugify(self.display_name)[:96]
        return super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return self.path_for(self.pk, self.slug)

    @property
    def url_slug(self) -> str:
        return f"{self.pk}-{self.slug}" if self.slug else str(self.pk)

    @staticmethod
    def path_for(pk: int, slug: str) -> str:
        """The page of researcher `pk` from its id and slug alone (lists read no more of it)."""
        return f"/researchers/{pk}-{slug}" if slug else f"/researchers/{pk}"


class ResearcherExternalId(models.Model):
    """An id a source gives this researcher. One id belongs to one record: a unique constraint."""

    SEMANTIC_SCHOLAR = "s2"
    OPENALEX = "openalex"
    ORCID = "orcid"
    SOURCES = [(SEMANTIC_SCHOLAR, "Semantic Scholar"), (OPENALEX, "OpenAlex"), (ORCID, "ORCID")]

    researcher = models.ForeignKey(
        Researcher, on_delete=models.CASCADE, related_name="external_ids"
    )
    # How the id came to this record: the readers' "why" for every identity link.
    MATCHING = "matching"
    CURATION = "curation"
    CLAIM = "claim"
    ORIGINS = [
        (MATCHING, "matched on a paper's byline"),
        (CURATION, "moved here by a curator's merge"),
        (CLAIM, "confirmed by the researcher's ORCID sign-in"),
    ]

    source = models.CharField(max_length=16, choices=SOURCES)
    value = models.CharField(max_length=64)
    origin = models.CharField(max_length=16, choices=ORIGINS, default=MATCHING)
    created_at = models.DateTimeField(null=True, blank=True, auto_now_add=True)
    # The source's own record, side by side with the others on the identity panel: its name and
    # figures as the source gave them, and when (set by the figures refresh; empty until then).
    name = models.CharField(max_length=255, blank=True)
    h_index = models.PositiveIntegerField(null=True, blank=True)
    citation_count = models.PositiveIntegerField(null=True, blank=True)
    works_count = models.PositiveIntegerField(null=True, blank=True)
    fetched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "value"], name="researcher_extid_unique"),
        ]
        indexes = [models.Index(fields=["researcher", "source"], name="extid_researcher_idx")]

    def __str__(self) -> str:
        return f"{self.source}:{self.value}"


class PaperMatchState(models.Model):
    """Where matching stands for one paper: what each source said, and when to try again.

    A source that does not know a paper is recorded as "unknown" (never guessed) and the paper
    is tried again after MATCH_UNKNOWN_RETRY_DAYS; a batch that failed because a service was
    unreachable changes nothing but these rows, and is tried again after
    MATCH_FAILED_RETRY_MINUTES.
    """

    NOT_TRIED = ""
    FOUND = "found"
    UNKNOWN = "unknown"
    ERROR = "error"
    # The source's record for the paper lists authors that cannot be this paper's (counts far
    # apart): none of its ids were used, and `mismatch` says why, for the curators.
    MISMATCH = "mismatch"
    SOURCE_STATES = [
        (NOT_TRIED, "not tried"),
        (FOUND, "found"),
        (UNKNOWN, "unknown"),
        (ERROR, "error"),
        (MISMATCH, "another paper's record"),
    ]

    MATCHED = "matched"  # at least one source knows the paper; its authorships are attached
    FAILED = "failed"  # a service could not answer; nothing was changed
    # Claimed by a batch for its first try: the row exists so that the claim can be held on it.
    PENDING = "pending"
    STATUSES = [
        (MATCHED, "matched"),
        (UNKNOWN, "unknown to every source"),
        (FAILED, "failed"),
        (PENDING, "being matched for the first time"),
    ]

    paper = models.OneToOneField(
        "papers.Paper", on_delete=models.CASCADE, primary_key=True, related_name="match_state"
    )
    status = models.CharField(max_length=16, choices=STATUSES)
    s2_status = models.CharField(max_length=16, choices=SOURCE_STATES, blank=True)
    openalex_status = models.CharField(max_length=16, choices=SOURCE_STATES, blank=True)
    # Copied from the paper so the backlog can resume newest first without a join.
    published = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_attempt_at = models.DateTimeField()
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    matched_authors = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    mismatch = models.TextField(
        blank=True, help_text="The source records set aside as another paper's, and why."
    )
    # The batch holding this paper (researchers.matching.lease), until its lease lapses (the
    # batch renews it while it works): no other worker matches it meanwhile. A claim also
    # moves next_attempt_at to the lease's end, so a paper whose worker died is due again,
    # first of all for the backlog, when the lease lapses.
    claim = models.CharField(max_length=32, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["next_attempt_at"], name="matchstate_next_idx"),
            models.Index(fields=["published"], name="matchstate_published_idx"),
            # The few rows a batch holds: the backlog looks there first for lapsed claims.
            models.Index(
                fields=["claimed_until"],
                name="matchstate_claimed_idx",
                condition=models.Q(claimed_until__isnull=False),
            ),
            models.Index(fields=["status", "-last_attempt_at"], name="matchstate_status_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id}: {self.status}"


class IdentityConflict(models.Model):
    """Evidence that the sources disagree about who someone is, for the curators' merge queue.

    Matching never merges or splits on its own: the records stay apart and each disagreement
    seen on a paper is recorded once (reruns find the same row).
    """

    S2_SPLIT = "s2_split"
    OPENALEX_SPLIT = "openalex_split"
    UNLINKED = "unlinked"
    ORCID = "orcid"
    KINDS = [
        (S2_SPLIT, "one OpenAlex id across several Semantic Scholar ids"),
        (OPENALEX_SPLIT, "one Semantic Scholar id across several OpenAlex ids"),
        (UNLINKED, "one person on a paper, two records (one per source)"),
        (ORCID, "one ORCID across several records"),
    ]
    OPEN = "open"
    RESOLVED = "resolved"
    DISMISSED = "dismissed"
    STATUSES = [(OPEN, "open"), (RESOLVED, "resolved"), (DISMISSED, "dismissed")]

    kind = models.CharField(max_length=16, choices=KINDS)
    status = models.CharField(max_length=16, choices=STATUSES, default=OPEN)
    # The record the authorship was attached to, and the other record involved (if any).
    researcher = models.ForeignKey(Researcher, on_delete=models.CASCADE, related_name="+")
    other_researcher = models.ForeignKey(
        Researcher, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # The ids the paper's two sources gave for this author.
    s2_id = models.CharField(max_length=64, blank=True)
    openalex_id = models.CharField(max_length=32, blank=True)
    orcid = models.CharField(max_length=32, blank=True)
    paper = models.ForeignKey(
        "papers.Paper", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    position = models.PositiveSmallIntegerField(null=True, blank=True)
    name_as_written = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "s2_id", "openalex_id", "orcid"], name="identityconflict_unique"
            ),
        ]
        indexes = [models.Index(fields=["status", "-created_at"], name="conflict_status_idx")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.researcher_id} / {self.other_researcher_id}"


class MatchSweep(models.Model):
    """Where the backlog's sweep for papers never tried stands (one row).

    The sweep walks every paper, newest first (the dated ones, then those with no date), a
    bounded stretch per batch, and starts again from the newest when it reaches the end: every
    paper with no match state is reached within a pass, wherever it falls, whatever became of
    the message that should have brought it to matching.
    """

    # The last paper examined; no paper: the next stretch starts at the newest.
    paper_id = models.BigIntegerField(null=True, blank=True)
    published = models.DateTimeField(null=True, blank=True)
    undated = models.BooleanField(default=False)
    passes = models.PositiveIntegerField(default=0, help_text="Walks completed.")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"sweep at paper {self.paper_id} (pass {self.passes + 1})"


class MatchRun(models.Model):
    """One run of matching (task or command), with its counts and what went wrong."""

    OK = "ok"
    PARTIAL = "partial"
    UNREACHABLE = "unreachable"
    STATUSES = [(OK, "ok"), (PARTIAL, "some batches failed"), (UNREACHABLE, "services unreachable")]
    # What a run counts, as matching's BatchResult adds them up.
    COUNTS = (
        "papers",
        "matched",
        "unknown",
        "failed",
        "authorships_attached",
        "researchers_created",
        "conflicts",
    )

    trigger = models.CharField(max_length=32)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=STATUSES, default=OK)
    papers = models.PositiveIntegerField(default=0)
    matched = models.PositiveIntegerField(default=0)
    unknown = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    authorships_attached = models.PositiveIntegerField(default=0)
    researchers_created = models.PositiveIntegerField(default=0)
    conflicts = models.PositiveIntegerField(default=0)
    message = models.TextField(blank=True)

    class Meta:
        indexes = [models.Index(fields=["-started_at"], name="matchrun_started_idx")]

    def __str__(self) -> str:
        return f"{self.trigger} {self.started_at:%Y-%m-%d %H:%M} {self.status}"


class CurationEntry(models.Model):
    """One curator action (who, when, what, before and after): the audit log, and what a split
    reads to undo a merge. `before`/`after` hold ids only, so an entry stays small."""

    MERGE = "merge"
    SPLIT = "split"
    MOVE = "move"
    DISTINCT = "distinct"
    CONFIRM = "confirm"
    UNLINK = "unlink"
    # The byline cleanup (papers.nonpersons): a record marked as naming no person, with the
    # authorships it held and the byline entries removed from its papers.
    NOT_PERSON = "not_person"
    # The same cleanup, one paper: its authorships before and after (researchers.byline_cleanup).
    BYLINE = "byline"
    # The researcher's own decisions on their verified page (researchers.verification,
    # researchers.owner_edits): the page verified (or the verification withdrawn), a paper
    # marked "not mine" or "mine too", a merge of same-name records proposed, the page's name,
    # affiliation, homepage or listing changed; and the curators undoing one of them.
    VERIFIED = "verified"
    OWNER_REMOVED = "owner_removed"
    OWNER_ATTACHED = "owner_attached"
    OWNER_PROPOSED = "owner_proposed"
    OWNER_EDITED = "owner_edited"
    OWNER_UNDONE = "owner_undone"
    ACTIONS = [
        (MERGE, "merge"),
        (SPLIT, "split (merge undone)"),
        (MOVE, "authorship moved"),
        (DISTINCT, "marked not the same person"),
        (CONFIRM, "uncertain link confirmed"),
        (UNLINK, "link undone"),
        (NOT_PERSON, "marked as naming no person"),
        (BYLINE, "byline read again"),
        (VERIFIED, "verified as the researcher's own page"),
        (OWNER_REMOVED, "removed by the researcher"),
        (OWNER_ATTACHED, "added by the researcher"),
        (OWNER_PROPOSED, "merge proposed by the researcher"),
        (OWNER_EDITED, "changed by the researcher"),
        (OWNER_UNDONE, "the researcher's change undone"),
    ]

    action = models.CharField(max_length=16, choices=ACTIONS)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # The survivor of a merge, the record an authorship moved to, the first of a pair; none for
    # a byline read again (its records are in `researchers`).
    researcher = models.ForeignKey(
        Researcher, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # Every record the action touched, for the history section of each of their pages.
    researchers = models.ManyToManyField(Researcher, related_name="curation_entries")
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    note = models.TextField(blank=True)
    # A merge that was split: the split entry. Set once; a split merge cannot be split again.
    undone_by = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="undoes"
    )

    class Meta:
        verbose_name_plural = "curation entries"
        indexes = [models.Index(fields=["-created_at"], name="curation_created_idx")]

    def __str__(self) -> str:
        return f"{self.get_action_display()} #{self.pk} on {self.researcher_id}"


class DistinctPair(models.Model):
    """Curators decided these two records are not the same person: the queue stops suggesting
    the pair and no merge joins them. Stored with the lower id first, so a pair is one row."""

    low = models.ForeignKey(Researcher, on_delete=models.CASCADE, related_name="+")
    high = models.ForeignKey(Researcher, on_delete=models.CASCADE, related_name="+")
    entry = models.ForeignKey(
        CurationEntry, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["low", "high"], name="distinctpair_unique"),
            models.CheckConstraint(
                condition=models.Q(low__lt=models.F("high")), name="distinctpair_ordered"
            ),
        ]
        indexes = [models.Index(fields=["high"], name="distinctpair_high_idx")]

    def __str__(self) -> str:
        return f"{self.low_id} is not {self.high_id}"


class PinnedAuthorship(models.Model):
    """An authorship a curator attributed by hand: matching leaves it where it was put."""

    authorship = models.OneToOneField(
        "papers.Authorship", on_delete=models.CASCADE, primary_key=True, related_name="pin"
    )
    entry = models.ForeignKey(
        CurationEntry, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"authorship {self.authorship_id} pinned"


class MatchReport(models.Model):
    """A signed-in reader says a match is wrong. It waits in the curators' queue with its
    evidence until a curator's merge, split, move or "not the same person" touching these
    records closes it (or a curator closes it without a change, saying why)."""

    NOT_BY = "not_by"
    SAME_PERSON = "same_person"
    DIFFERENT_PEOPLE = "different_people"
    KINDS = [
        (NOT_BY, "this paper is not by this person"),
        (SAME_PERSON, "these two are the same person"),
        (DIFFERENT_PEOPLE, "these are different people"),
    ]
    OPEN = "open"
    ACTED = "acted"
    DECLINED = "declined"
    STATUSES = [
        (OPEN, "waiting for a curator"),
        (ACTED, "a curator changed the records"),
        (DECLINED, "a curator kept the records as they are"),
    ]

    kind = models.CharField(max_length=24, choices=KINDS)
    status = models.CharField(max_length=16, choices=STATUSES, default=OPEN)
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="match_reports"
    )
    researcher = models.ForeignKey(Researcher, on_delete=models.CASCADE, related_name="+")
    other_researcher = models.ForeignKey(
        Researcher, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # For "not by": the byline slot the reader means.
    authorship = models.ForeignKey(
        "papers.Authorship", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.TextField(blank=True, max_length=2000)
    outcome = models.TextField(blank=True)
    closed_by = models.ForeignKey(
        CurationEntry, null=True, blank=True, on_delete=models.SET_NULL, related_name="reports"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["status", "-created_at"], name="report_status_idx"),
            models.Index(fields=["reporter", "-created_at"], name="report_reporter_idx"),
            models.Index(fields=["researcher", "status"], name="report_researcher_idx"),
            models.Index(fields=["other_researcher", "status"], name="report_other_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.researcher_id}, {self.status})"


class InstitutionResearcher(models.Model):
    """A live researcher record on an institution's bylines, and on how many of its papers: the
    institution's full list of researchers, paged in index order at any size, and the count
    the page states (Institution.researcher_count), both from one refresh
    (researchers.institution_members)."""

    institution = models.ForeignKey(
        "institutions.Institution", on_delete=models.CASCADE, related_name="+"
    )
    researcher = models.ForeignKey(Researcher, on_delete=models.CASCADE, related_name="+")
    papers = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["institution", "researcher"], name="institution_researcher_unique"
            )
        ]
        indexes = [
            models.Index(
                fields=["institution", "-papers", "researcher"], name="institution_members_idx"
            ),
            models.Index(fields=["researcher"], name="institution_member_researcher"),
        ]

    def __str__(self) -> str:
        return f"{self.researcher_id} at {self.institution_id} ({self.papers})"
