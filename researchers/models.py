from __future__ import annotations

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
    # Page figures maintained by matching (researchers.stats), so that a researcher with 2,000
    # papers renders with the same few queries as one with 2. Never computed per request.
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
    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["-paper_count", "id"], name="researcher_papers_idx"),
            models.Index(fields=["-h_index", "id"], name="researcher_hindex_idx"),
            models.Index(fields=["merged_into"], name="researcher_merged_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.display_name} ({self.pk})"

    def save(self, *args, **kwargs):
        if not self.slug:
            self.slug = slugify(self.display_name)[:96]
        return super().save(*args, **kwargs)

    @property
    def url_slug(self) -> str:
        return f"{self.pk}-{self.slug}" if self.slug else str(self.pk)

    def get_absolute_url(self) -> str:
        return f"/researchers/{self.url_slug}"


class ResearcherExternalId(models.Model):
    """An id a source gives this researcher. One id belongs to one record: a unique constraint."""

    SEMANTIC_SCHOLAR = "s2"
    OPENALEX = "openalex"
    ORCID = "orcid"
    SOURCES = [(SEMANTIC_SCHOLAR, "Semantic Scholar"), (OPENALEX, "OpenAlex"), (ORCID, "ORCID")]

    researcher = models.ForeignKey(Researcher, on_delete=models.CASCADE, related_name="external_ids")
    source = models.CharField(max_length=16, choices=SOURCES)
    value = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "value"], name="researcher_extid_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.source}:{self.value}"
