from __future__ import annotations

from django.db import models
from slugify import slugify

from wovepaper.lib.text import folded_words


class Institution(models.Model):
    name = models.CharField(max_length=255)
    # The name as searched without a search engine: folded (case, accents), kept by save() and
    # by the services that write names in bulk.
    folded_name = models.CharField(max_length=255, blank=True, editable=False)
    slug = models.SlugField(max_length=96, blank=True)
    ror_id = models.CharField(
        max_length=16,
        null=True,
        blank=True,
        unique=True,
        help_text="The bare ROR id, e.g. 00f54p054.",
    )
    openalex_id = models.CharField(max_length=32, null=True, blank=True, unique=True)
    country_code = models.CharField(max_length=2, blank=True)
    type = models.CharField(max_length=32, blank=True)
    other_names = models.JSONField(default=list, blank=True)
    # Completed once from ROR (institutions.services.institutions_complete_from_ror).
    acronyms = models.JSONField(default=list, blank=True)
    types = models.JSONField(default=list, blank=True)
    city = models.CharField(max_length=255, blank=True)
    established = models.PositiveSmallIntegerField(null=True, blank=True)
    website = models.URLField(max_length=500, blank=True)
    # [{"type": "parent"|"child"|"related"|…, "ror_id": "…", "label": "…"}], as ROR lists them.
    relationships = models.JSONField(default=list, blank=True)
    ror_status = models.CharField(
        max_length=16,
        blank=True,
        help_text="active/inactive/withdrawn from ROR; unknown if ROR "
        "does not know the id; empty until asked.",
    )
    ror_checked_at = models.DateTimeField(null=True, blank=True)
    # Maintained by matching, so lists sort without counting per request.
    researcher_count = models.PositiveIntegerField(default=0)
    paper_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["-paper_count", "id"], name="institution_papers_idx"),
            models.Index(fields=["name"], name="institution_name_idx"),
            models.Index(fields=["country_code"], name="institution_country_idx"),
            models.Index(fields=["ror_checked_at"], name="institution_rorcheck_idx"),
            # The search engine's periodic catch-up reads what changed since its last round.
            models.Index(fields=["modified_at"], name="institution_modified_idx"),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        self.folded_name = folded_words(self.name)[:255]
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "name" in update_fields:
            kwargs["update_fields"] = {*update_fields, "folded_name"}
        if not self.slug:
            self.slug = slugify(self.name)[:96]
        return super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return f"/institutions/{self.url_slug}"

    @property
    def kind(self) -> str:
        """What the organisation is (education, company, government, ...), or "" when the
        sources do not say. ROR's and OpenAlex's "funder" says that it funds research, not what
        it is (OpenAlex types Google so): it is never shown as the kind."""
        kinds = [t for t in [*self.types, self.type] if t and t.lower() != "funder"]
        return kinds[0] if kinds else ""

    @property
    def url_slug(self) -> str:
        return f"{self.pk}-{self.slug}" if self.slug else str(self.pk)

    @property
    def parents(self) -> list[dict]:
        return [r for r in self.relationships if r.get("type") == "parent"]

    @property
    def children(self) -> list[dict]:
        return [r for r in self.relationships if r.get("type") == "child"]

    @property
    def ror_url(self) -> str:
        return f"https://ror.org/{self.ror_id}" if self.ror_id else ""


class AuthorshipInstitution(models.Model):
    """An institution listed for one authorship (from OpenAlex), the paper copied for paging."""

    authorship = models.ForeignKey(
        "papers.Authorship", on_delete=models.CASCADE, related_name="institution_links"
    )
    institution = models.ForeignKey(
        Institution, on_delete=models.CASCADE, related_name="authorship_links"
    )
    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["authorship", "institution"], name="authorship_institution_unique"
            ),
        ]
        indexes = [models.Index(fields=["institution", "paper"], name="authinst_inst_paper_idx")]

    def __str__(self) -> str:
        return f"{self.authorship_id} @ {self.institution_id}"
