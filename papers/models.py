from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from wovepaper.lib.identifiers import dois_in

from .ingest.records import PUBLISHED_MONTH

CITATION_SOURCES = {"s2": "Semantic Scholar", "openalex": "OpenAlex"}


class Paper(models.Model):
    """One arXiv paper, at its latest version. `arxiv_id` is the natural key (no version suffix)."""

    arxiv_id = models.CharField(max_length=64)
    version = models.PositiveSmallIntegerField(default=1)
    title = models.TextField()
    abstract = models.TextField(blank=True)
    authors = models.TextField(blank=True, help_text="The byline as written on arXiv.")
    categories = models.CharField(
        max_length=255, blank=True, help_text="Space-separated arXiv categories, primary first."
    )
    primary_category = models.CharField(max_length=32, blank=True)
    published = models.DateTimeField(null=True, blank=True, help_text="Date of version 1.")
    # NULL: `published` is the day a source gave. "month": no source dated the paper, and
    # `published` is the first day of the month its arXiv identifier names (1301.3781: January
    # 2013), shown as a month. Nullable so that adding it is an ALTER TABLE ADD COLUMN (SQLite
    # would otherwise rebuild papers_paper, which drops its FTS5 triggers).
    published_precision = models.CharField(  # noqa: DJ001
        max_length=8, null=True, blank=True, choices=[(PUBLISHED_MONTH, PUBLISHED_MONTH)]
    )
    updated = models.DateField(null=True, blank=True, help_text="Last metadata change on arXiv.")
    doi = models.CharField(max_length=255, blank=True)
    journal_ref = models.TextField(blank=True)
    comments = models.TextField(blank=True)
    report_no = models.TextField(blank=True)
    license = models.CharField(max_length=255, blank=True)
    submitter = models.CharField(max_length=255, blank=True)
    # NULL: the title and byline are arXiv's own record. "s2" or "openalex": arXiv's record is
    # not in the archive yet, and they are as that source lists them (said on the page). Nullable
    # so that adding it is an ALTER TABLE ADD COLUMN (see published_precision).
    record_source = models.CharField(max_length=16, null=True, blank=True)  # noqa: DJ001
    cited_by_count = models.PositiveIntegerField(null=True, blank=True)
    # Where `cited_by_count` came from ("s2" or "openalex", as ResearcherExternalId.source) and
    # when matching read it. Nullable so that adding it is an ALTER TABLE ADD COLUMN: SQLite
    # would otherwise rebuild papers_paper, which drops its FTS5 triggers.
    cited_by_source = models.CharField(max_length=16, null=True, blank=True)  # noqa: DJ001
    cited_by_updated_at = models.DateTimeField(null=True, blank=True)
    # NULL, not "", for "unknown": many papers lack these and a unique constraint ignores NULLs.
    semantic_scholar_id = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    openalex_id = models.CharField(max_length=32, null=True, blank=True)  # noqa: DJ001
    slug = models.SlugField(max_length=96, blank=True, db_index=False)
    is_withdrawn = models.BooleanField(default=False)
    is_deleted = models.BooleanField(default=False)
    # A digest of the upstream metadata lets a rerun tell "unchanged" without comparing fields.
    source_hash = models.CharField(max_length=32, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Every index here is paid on each of ~2.6M inserts, so only what pages, the API and
        # the upserts query gets one. Uniqueness is a constraint rather than `unique=True`,
        # which on PostgreSQL would add a second, pattern-ops index per column.
        constraints = [
            models.UniqueConstraint(fields=["arxiv_id"], name="paper_arxiv_id_unique"),
            models.UniqueConstraint(fields=["semantic_scholar_id"], name="paper_s2_id_unique"),
            models.UniqueConstraint(fields=["openalex_id"], name="paper_openalex_id_unique"),
        ]
        indexes = [
            models.Index(fields=["-published", "-id"], name="paper_published_idx"),
            # Resolving a cited work by DOI (papers.citations.load); partial, since most arXiv
            # papers have no DOI, and on lower(doi) because DOIs are case-insensitive.
            models.Index(Lower("doi"), name="paper_doi_lower_idx", condition=~models.Q(doi="")),
            # The few papers whose doi field holds several DOIs (the article and its erratum:
            # about 0.25% of the demo), read whole when a DOI is looked up
            # (papers.selectors.papers_by_doi).
            models.Index(
                fields=["id"], name="paper_several_dois_idx", condition=models.Q(doi__contains=" ")
            ),
        ]

    def __str__(self) -> str:
        return f"{self.arxiv_id}: {self.title[:80]}"

    def get_absolute_url(self) -> str:
        return f"/papers/{self.url_slug}"

    @property
    def cited_by_source_name(self) -> str:
        source = self.cited_by_source or ""
        return CITATION_SOURCES.get(source, source)

    @property
    def cited_by_source_url(self) -> str:
        """The source's record of this paper, where its citation count can be checked."""
        if self.cited_by_source == "s2" and self.semantic_scholar_id:
            return f"https://www.semanticscholar.org/paper/{self.semantic_scholar_id}"
        if self.cited_by_source == "openalex" and self.openalex_id:
            return f"https://openalex.org/{self.openalex_id}"
        return ""

    @property
    def category_list(self) -> list[str]:
        return self.categories.split()

    @property
    def record_source_name(self) -> str:
        """The source whose title and byline stand in for arXiv's record ("" when arXiv's)."""
        return CITATION_SOURCES.get(self.record_source or "", "")

    @property
    def dated_by_arxiv(self) -> bool:
        """arXiv's own record gave the first version's day (a paper known only from Semantic
        Scholar or OpenAlex is dated by its identifier's month)."""
        return self.published is not None and self.published_precision is None

    @property
    def published_month_only(self) -> bool:
        """The date is the month the arXiv identifier names, not a day a source gave."""
        return self.published_precision == PUBLISHED_MONTH

    @property
    def doi_list(self) -> list[str]:
        """Every DOI arXiv gives for the paper, in its order (the article first, then, say, an
        erratum): `doi` holds them as arXiv wrote them."""
        return dois_in(self.doi)

    @property
    def abs_url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv_id}"

    @property
    def pdf_url(self) -> str:
        return f"https://arxiv.org/pdf/{self.arxiv_id}"

    @property
    def url_slug(self) -> str:
        return f"{self.arxiv_id}-{self.slug}" if self.slug else self.arxiv_id


class PaperSearchDocument(models.Model):
    """A paper's keyword-search document on PostgreSQL: its weighted text-search vector (title
    above abstract), with a GIN index that migration 0008 creates on PostgreSQL only.

    Built by papers.search.postgres_documents after the paper is written, not with it: computing the
    vector and adding it to the GIN index costs more than writing the paper's rows. `source_hash` is
    the paper's digest the document was built from, so a changed paper shows as stale.
    SQLite searches an FTS5 table kept by triggers instead, and leaves this table empty.
    """

    # No database foreign key: its check cost 6 us per document, a tenth of indexing one, and a
    # document is derived data that search only ever reaches through a join to its paper.
    # Deleting a paper through the ORM still deletes its document.
    paper = models.OneToOneField(
        Paper,
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="search_document",
        db_constraint=False,
    )
    source_hash = models.CharField(max_length=32, blank=True)
    document = SearchVectorField()

    def __str__(self) -> str:
        return f"search document of {self.paper_id}"


class PaperEmbedding(models.Model):
    """A paper's sentence embedding (title and abstract), for semantic search and similar papers.

    `model` is the name of the encoder that made it (wovepaper.lib.embeddings): a paper whose
    vector came from another model, or from an older digest of the paper (`source_hash`), is
    pending and gets embedded again. The vector is float16 bytes, `dimensions` numbers.
    Written by papers.search.embedding_stage, from Celery's embed queue; the vector index is built
    from here.
    """

    # No database foreign key, as for search documents: derived data reached through its paper.
    paper = models.OneToOneField(
        Paper,
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="embedding",
        db_constraint=False,
    )
    model = models.CharField(max_length=128)
    source_hash = models.CharField(max_length=32, blank=True)
    dimensions = models.PositiveSmallIntegerField()
    vector = models.BinaryField()
    embedded_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["model"], name="paper_embedding_model")]

    def __str__(self) -> str:
        return f"embedding of {self.paper_id} ({self.model})"


class PaperEmbeddingClaim(models.Model):
    """Papers a batch is embedding (papers.search.embedding_stage), each held by one batch until
    its lease lapses, so that two embed workers never embed the same paper. The batch deletes
    its rows in the transaction that writes its vectors; a worker that died leaves them until
    `claimed_until`, after which another batch takes them (wovepaper.lib.leases). The table
    holds only the batches in flight."""

    paper = models.OneToOneField(
        Paper,
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="embedding_claim",
        db_constraint=False,
    )
    claim = models.CharField(max_length=32)
    claimed_until = models.DateTimeField()

    def __str__(self) -> str:
        return f"embedding claim on {self.paper_id} until {self.claimed_until}"


class PaperCategory(models.Model):
    """One row per (paper, category), so category filters and "newest in category" use an index.

    `published` is copied from the paper so that "newest papers in cs.LG" is one index range scan.
    """

    # The unique (paper, code) index serves lookups by paper; a separate FK index would be waste.
    paper = models.ForeignKey(
        Paper, on_delete=models.CASCADE, related_name="category_links", db_index=False
    )
    code = models.CharField(max_length=32)
    is_primary = models.BooleanField(default=False)
    published = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "paper categories"
        constraints = [
            models.UniqueConstraint(fields=["paper", "code"], name="papercategory_unique"),
        ]
        indexes = [models.Index(fields=["code", "-published"], name="papercategory_code_pub_idx")]

    def __str__(self) -> str:
        return f"{self.paper_id} {self.code}"


# Below this confidence a link of a byline name to a researcher is uncertain: the paper page says
# so, and the curators' list of uncertain links shows it.
MATCH_CERTAIN = 0.8


class Authorship(models.Model):
    """A name in a paper's byline, at its 1-based position; `researcher` is set by matching."""

    # Lookups by paper use the unique (paper, position) index, by researcher the (researcher,
    # paper) one; single-column FK indexes beside them would only slow the bulk import.
    paper = models.ForeignKey(
        Paper, on_delete=models.CASCADE, related_name="authorships", db_index=False
    )
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=255, help_text="The name as written, TeX accents decoded.")
    keyname = models.CharField(max_length=255, blank=True)
    forenames = models.CharField(max_length=255, blank=True)
    suffix = models.CharField(max_length=32, blank=True)
    affiliation = models.TextField(blank=True)
    # False for a collaboration named as an author ("The ATLAS Collaboration"): it keeps its
    # place in the byline and is no one's record (papers.nonpersons). A database default too,
    # for the import's COPY.
    is_person = models.BooleanField(default=True, db_default=True)
    researcher = models.ForeignKey(
        "researchers.Researcher",
        db_index=False,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="authorships",
    )
    # When matching attached `researcher`: a paper matched after it was published is still news
    # to the researcher's followers (the digest reads this).
    matched_at = models.DateTimeField(null=True, blank=True)

    class MatchMethod(models.TextChoices):
        """How matching paired this byline name with a source's author
        (researchers.author_list_alignment)."""

        EXACT = "exact", "the same name"
        INITIALS = "initials", "initials of the name"
        NICKNAME = "nickname", "a nickname of the name"
        REORDERED = "reordered", "the name with given and family names the other way round"
        FAMILY_VARIANT = "family_variant", "a variant spelling of the family name"
        NEAR_GIVEN = "near_given", "a given name spelt nearly the same"
        SINGLE_NAME = "single_name", "a single name"
        OUT_OF_ORDER = "out_of_order", "the same name, out of byline order"
        SAME_SLOT = "same_slot", "the same place in the list and the same family name"
        # A curator looked at an uncertain link and confirmed it (researchers.curation).
        CURATOR = "curator", "a curator's check"

    # A database default too: the import's COPY names only the byline's columns.
    match_method = models.CharField(
        max_length=16, blank=True, default="", db_default="", choices=MatchMethod.choices
    )
    match_confidence = models.FloatField(
        null=True, blank=True, help_text="How sure matching is of `researcher`, from 0 to 1."
    )

    class Meta:
        ordering = ["paper", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["paper", "position"], name="authorship_unique_position"
            ),
        ]
        indexes = [
            models.Index(fields=["researcher", "paper"], name="authorship_researcher_idx"),
            # The curators' list of uncertain links reads only these few rows.
            models.Index(
                fields=["match_confidence"],
                condition=models.Q(match_confidence__lt=MATCH_CERTAIN),
                name="authorship_uncertain_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.paper_id} #{self.position})"

    @property
    def match_uncertain(self) -> bool:
        return self.match_confidence is not None and self.match_confidence < MATCH_CERTAIN


class RejectedRecord(models.Model):
    """An input record set aside with its id and the reason; reruns update the same row."""

    source = models.CharField(max_length=64, help_text="e.g. snapshot:<file> or oai:<set>")
    record_key = models.CharField(max_length=255, help_text="arXiv id, or the line number")
    reason = models.TextField()
    raw = models.TextField(blank=True, help_text="The start of the record, for inspection.")
    first_seen = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "record_key"], name="rejected_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.source} {self.record_key}: {self.reason[:60]}"


class HarvestRun(models.Model):
    """One OAI-PMH harvest window and how far it got.

    The checkpoint (`resumption_token`, `pages`, counts, `checkpoint_datestamp`) is saved in the
    same transaction as each page's papers, so after a crash the run resumes exactly where its
    data ends. `response_date` of the first page is the `from` of the next incremental run.
    """

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        SUCCEEDED = "succeeded", "succeeded"
        FAILED = "failed", "failed"

    # What a run counts, checkpointed with each page.
    COUNTS = ("pages", "created", "updated", "unchanged", "rejected", "deleted")

    set_spec = models.CharField(max_length=64, blank=True, help_text="Blank: all of arXiv.")
    metadata_prefix = models.CharField(max_length=16, default="arXivRaw")
    endpoint = models.URLField(max_length=255)
    from_date = models.DateField(null=True, blank=True)
    until_date = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    resumption_token = models.TextField(
        blank=True, help_text="Token for the next page; blank before the first page and at the end."
    )
    checkpoint_datestamp = models.DateField(
        null=True,
        blank=True,
        help_text="Newest datestamp of the saved pages while they came in datestamp order: "
        "where the window restarts if the token is refused.",
    )
    pages = models.PositiveIntegerField(default=0)
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    deleted = models.PositiveIntegerField(default=0)
    restarts = models.PositiveSmallIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    response_date = models.DateTimeField(
        null=True, blank=True, help_text="responseDate of the first page."
    )
    started_at = models.DateTimeField(auto_now_add=True)
    checkpoint_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Last sign of life of the process running it (papers.harvest.lock).",
    )
    task_id = models.CharField(
        max_length=64,
        blank=True,
        db_index=True,
        help_text="The Celery task running it: a redelivery of that task resumes this run.",
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["set_spec", "metadata_prefix", "status", "-started_at"],
                name="harvestrun_set_status_idx",
            ),
            models.Index(fields=["-started_at"], name="harvestrun_started_idx"),
        ]

    def __str__(self) -> str:
        return f"harvest #{self.pk} {self.set_spec or 'all'} {self.from_date}..{self.until_date}"

    @staticmethod
    def stale_before(now: datetime | None = None) -> datetime:
        """A running run whose last heartbeat is older than this is dead: a live one beats
        every third of HARVEST_LOCK_TTL."""
        return (now or timezone.now()) - timedelta(seconds=settings.HARVEST_LOCK_TTL)

    @property
    def is_stale(self) -> bool:
        """Marked running, but its heartbeat stopped: the process running it is gone."""
        if self.status != self.Status.RUNNING:
            return False
        beat = self.heartbeat_at or self.checkpoint_at or self.started_at
        return beat is None or beat < self.stale_before()

    @property
    def duration(self):
        end = self.finished_at or self.checkpoint_at
        return end - self.started_at if end and self.started_at else None


class PaperAnalysis(models.Model):
    """What papers.analysis made of a paper, and how: with the model (`model`) and prompt
    version (`prompt_version`) that made it, on `analysed_at`. Without a model, `model` is
    blank and only the parts that can be computed honestly are filled (topics from the
    abstract's key phrases, the research field from the categories); `missing` names every part
    left empty and why, for the page to say so.

    One row per paper, replaced when the paper is analysed again (a new prompt version, another
    model, or a changed abstract: `source_hash` is the paper's digest it was made from).
    """

    class PaperType(models.TextChoices):
        METHOD = "method", "method"
        EMPIRICAL = "empirical study", "empirical study"
        SURVEY = "survey", "survey"
        BENCHMARK = "benchmark or dataset", "benchmark or dataset"
        THEORY = "theory", "theory"
        POSITION = "position", "position"
        SYSTEM = "system", "system"
        OTHER = "other", "other"

    # The paper's primary key is this row's: one analysis per paper, found by the paper's id.
    paper = models.OneToOneField(
        Paper, primary_key=True, on_delete=models.CASCADE, related_name="analysis"
    )
    summary = models.TextField(blank=True)
    topics = models.JSONField(default=list, blank=True)
    paper_type = models.CharField(max_length=32, blank=True, choices=PaperType.choices)
    research_field = models.CharField(max_length=255, blank=True)
    novelty = models.TextField(blank=True, help_text="What the paper says is new.")
    significance_score = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="1 (minor) to 10 (field-changing), as the model rates it."
    )
    significance_reasons = models.TextField(blank=True)
    missing = models.JSONField(
        default=dict, blank=True, help_text="Each part left empty, with the reason."
    )
    model = models.CharField(max_length=128, blank=True, help_text="Blank: no model was used.")
    prompt_version = models.CharField(max_length=32)
    tokens = models.PositiveIntegerField(
        null=True, blank=True, help_text="Tokens the model call used (prompt + answer)."
    )
    source_hash = models.CharField(max_length=32, blank=True)
    analysed_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "paper analyses"
        indexes = [
            # The backlog asks "is this paper's analysis current?" per paper, newest first.
            models.Index(fields=["prompt_version", "model"], name="paperanalysis_version_idx"),
        ]

    def __str__(self) -> str:
        return f"analysis of {self.paper_id} ({self.model or 'no model'}, {self.prompt_version})"


class Citation(models.Model):
    """One edge of the citation graph: an archive paper cites a work, as one source said.

    The cited work is known by its ids as the source gave them and, when any of them matches an
    archive paper, by that paper (`cited_paper`); `cited_key` names the work so that a preprint
    and its published version are one work (sources.citation_answers.work_key). Where two sources
    disagree both rows stay: the key is (citing paper, cited work, source). Written only by
    papers.citations.load, which replaces a paper's edges from one source as a whole.
    """

    citing_paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    cited_key = models.CharField(max_length=300)
    cited_paper = models.ForeignKey(
        Paper, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    cited_arxiv_id = models.CharField(max_length=64, blank=True)
    cited_doi = models.CharField(max_length=255, blank=True)
    cited_s2_id = models.CharField(max_length=64, blank=True)
    cited_openalex_id = models.CharField(max_length=32, blank=True)
    cited_title = models.TextField(blank=True)
    cited_year = models.PositiveSmallIntegerField(null=True, blank=True)
    cited_citation_count = models.PositiveIntegerField(null=True, blank=True)
    # "s2" or "openalex", as Paper.cited_by_source, and when that source was read.
    source = models.CharField(max_length=16)
    fetched_at = models.DateTimeField()
    # NULL: the source did not say (OpenAlex never does; S2 only on its references endpoint).
    is_influential = models.BooleanField(null=True, blank=True)
    intents = models.JSONField(default=list, blank=True)
    contexts = models.JSONField(default=list, blank=True)
    # The citing paper's first-version date, copied so that "cited by" pages sort by date
    # from an index instead of joining every citing paper of a much-cited one.
    citing_published = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["citing_paper", "cited_key", "source"], name="citation_edge_unique"
            ),
        ]
        indexes = [
            # Papers citing a paper, newest first; only resolved edges, a minority of ~100M.
            models.Index(
                "cited_paper",
                models.F("citing_published").desc(),
                name="citation_cited_by_date_idx",
                condition=models.Q(cited_paper__isnull=False),
            ),
            # Papers citing the same work outside the archive ("related by citations"), by the
            # key the edges name it with; only unresolved edges, which the index above leaves.
            models.Index(
                "cited_key",
                "citing_paper",
                name="citation_outside_key_idx",
                condition=models.Q(cited_paper__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.citing_paper_id} cites {self.cited_key} ({self.source})"

    @property
    def source_name(self) -> str:
        return CITATION_SOURCES.get(self.source, self.source)

    # A cited work is named, and linked to, by the first id it has in this order:
    # (field, label, link), each format taking the id.
    CITED_IDS = (
        ("cited_arxiv_id", "arXiv:{}", "https://arxiv.org/abs/{}"),
        ("cited_doi", "doi:{}", "https://doi.org/{}"),
        (
            "cited_s2_id",
            "Semantic Scholar paper {:.10}…",
            "https://www.semanticscholar.org/paper/{}",
        ),
        ("cited_openalex_id", "OpenAlex work {}", "https://openalex.org/{}"),
    )

    def _first_cited_id(self) -> tuple[str, str, str] | None:
        """The cited work's first id, with its label and link formats."""
        for field, label, link in self.CITED_IDS:
            if value := getattr(self, field):
                return value, label, link
        return None

    @property
    def id_label(self) -> str:
        """The cited work named by its first id, for a work the source gave no title for."""
        first = self._first_cited_id()
        return first[1].format(first[0]) if first else "a work with no id"

    @property
    def link_out(self) -> str:
        """Where the cited work can be looked up outside this site, by the first id known."""
        first = self._first_cited_id()
        return first[2].format(first[0]) if first else ""


class CitationCoverage(models.Model):
    """What one source said about one paper's citations, and when: whether it knows the paper,
    how many references it listed, its citation count and (OpenAlex) citations per year.

    It is what a paper's lists say of their coverage ("references known from Semantic Scholar,
    2026-11-12"), and it tells a source that knows no reference for a paper from a paper not
    asked yet. Written only by papers.citations.load, with the edges of the same fetch.
    """

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=16)  # "s2" or "openalex", as Citation.source
    fetched_at = models.DateTimeField()
    known = models.BooleanField()  # False: the source answered that it does not know the paper
    references_listed = models.PositiveIntegerField(null=True, blank=True)
    cited_by_count = models.PositiveIntegerField(null=True, blank=True)
    # OpenAlex's counts_by_year as [[year, cited_by_count], ...], newest first; [] elsewhere.
    counts_by_year = models.JSONField(default=list, blank=True)
    # When Semantic Scholar's references endpoint (influence, intents, contexts) last gave this
    # paper's references, which its "s2" edges then are; null: only the paper batch's list.
    references_detailed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["paper", "source"], name="citation_coverage_unique"),
        ]
        indexes = [
            # The oldest fetches first, for refreshing (papers.citations.load.papers_citations_due).
            models.Index(fields=["source", "fetched_at"], name="citation_coverage_age_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id} citations from {self.source} at {self.fetched_at:%Y-%m-%d}"


class PaperChange(models.Model):
    """What a harvest saw change on a paper already held: a new arXiv version, a withdrawal, or
    a journal reference or DOI gained (papers.ingest.upsert). Readers are told of the papers in
    their lists or by the researchers they follow ("v3 posted", "withdrawn", "published in …")."""

    class Kind(models.TextChoices):
        VERSION = "version", "new version"
        WITHDRAWN = "withdrawn", "withdrawn"
        PUBLISHED = "published", "published"

    # Indexed by the (paper, -recorded_at) index.
    paper = models.ForeignKey(
        Paper, on_delete=models.CASCADE, related_name="changes", db_index=False
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # The new version's number, the journal reference or DOI; empty for a withdrawal.
    detail = models.TextField(blank=True)
    recorded_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["paper", "-recorded_at"], name="paperchange_paper_idx"),
            models.Index(fields=["-recorded_at", "-id"], name="paperchange_recorded_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} of paper {self.paper_id}: {self.detail}"

    @property
    def announcement(self) -> str:
        if self.kind == self.Kind.VERSION:
            return f"v{self.detail} posted"
        if self.kind == self.Kind.WITHDRAWN:
            return "withdrawn"
        return f"published in {self.detail}"


# The longest word counted: longer ones are formulas and run-together text, not words to spell.
WRITTEN_WORD_LENGTH = 40


class WrittenWord(models.Model):
    """A word that papers write, and in how many: the vocabulary a misspelt search is corrected
    against (papers.spelling). Counted over every paper's title, abstract and byline by
    `count_written_words`, once a day; `counting` is the count in progress, so that searches
    read the last complete one meanwhile."""

    # In lower case, accents folded (papers.spelling.folded): as the query's words are looked up.
    word = models.CharField(max_length=WRITTEN_WORD_LENGTH, primary_key=True)
    papers = models.PositiveIntegerField(
        default=0, help_text="Papers whose title, abstract or byline writes the word."
    )
    counting = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.word}: {self.papers} papers"


class WordCount(models.Model):
    """One count of the words papers write (papers.spelling.count_written_words): how far it
    has read, papers by id, written in the same transaction as each batch's counts, so that a
    task delivered again after its worker died goes on from there and counts no paper twice."""

    started_at = models.DateTimeField()
    # Every paper up to this id is in WrittenWord.counting.
    counted_through = models.BigIntegerField(default=0)
    progressed_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        state = f"finished {self.finished_at:%Y-%m-%d %H:%M}" if self.finished_at else "running"
        return f"word count of {self.started_at:%Y-%m-%d %H:%M}, {state}"
