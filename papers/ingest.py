"""The one idempotent upsert that both the snapshot import and the OAI-PMH harvest go through."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import transaction
from slugify import slugify

from .models import Authorship, Paper, PaperCategory, RejectedRecord
from .records import PaperRecord

PAPER_UPDATE_FIELDS = [
    "version", "title", "abstract", "authors", "categories", "primary_category", "published",
    "updated", "doi", "journal_ref", "comments", "report_no", "license", "submitter", "slug",
    "is_withdrawn", "is_deleted", "source_hash", "modified_at",
]


@dataclass
class UpsertCounts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: int = 0

    def add(self, other: UpsertCounts) -> None:
        self.created += other.created
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.rejected += other.rejected

    def as_dict(self) -> dict[str, int]:
        return {"created": self.created, "updated": self.updated,
                "unchanged": self.unchanged, "rejected": self.rejected}


def paper_slug(title: str) -> str:
    return slugify(title, max_length=80, word_boundary=True) or "paper"


def _paper_from_record(record: PaperRecord, digest: str) -> Paper:
    return Paper(
        arxiv_id=record.arxiv_id,
        version=record.version,
        title=record.title,
        abstract=record.abstract,
        authors=record.authors_raw or ", ".join(a.display for a in record.authors),
        categories=" ".join(record.categories),
        primary_category=record.categories[0] if record.categories else "",
        published=record.published,
        updated=record.updated,
        doi=record.doi,
        journal_ref=record.journal_ref,
        comments=record.comments,
        report_no=record.report_no,
        license=record.license,
        submitter=record.submitter,
        slug=paper_slug(record.title),
        is_withdrawn=record.is_withdrawn,
        is_deleted=record.is_deleted,
        source_hash=digest,
    )


def papers_upsert(records: Sequence[PaperRecord]) -> tuple[UpsertCounts, list[int]]:
    """Insert or update a batch of papers with their authorships and categories.

    Idempotent: a record whose metadata digest is unchanged is not touched. For a changed paper,
    authorships at positions whose name is unchanged keep their matched researcher; positions
    whose name changed lose the match; positions past the new byline are removed.
    Returns the counts and the ids of papers that were created or changed (for matching).
    """
    counts = UpsertCounts()
    # The last record for an id wins, as it would if they came one after another.
    by_id: dict[str, PaperRecord] = {r.arxiv_id: r for r in records}
    if not by_id:
        return counts, []
    digests = {arxiv_id: r.digest() for arxiv_id, r in by_id.items()}
    with transaction.atomic():
        existing = dict(
            Paper.objects.filter(arxiv_id__in=list(by_id)).values_list("arxiv_id", "source_hash")
        )
        changed: list[Paper] = []
        for arxiv_id, record in by_id.items():
            if arxiv_id in existing and existing[arxiv_id] == digests[arxiv_id]:
                counts.unchanged += 1
                continue
            if arxiv_id in existing:
                counts.updated += 1
            else:
                counts.created += 1
            changed.append(_paper_from_record(record, digests[arxiv_id]))
        if not changed:
            return counts, []
        saved = Paper.objects.bulk_create(
            changed,
            update_conflicts=True,
            unique_fields=["arxiv_id"],
            update_fields=PAPER_UPDATE_FIELDS,
        )
        if any(p.pk is None for p in saved):
            ids = dict(
                Paper.objects.filter(arxiv_id__in=[p.arxiv_id for p in saved]).values_list(
                    "arxiv_id", "pk"
                )
            )
            for paper in saved:
                paper.pk = ids[paper.arxiv_id]
        updated_ids = [p.pk for p in saved if p.arxiv_id in existing]
        _sync_categories(saved, by_id, updated_ids)
        _sync_authorships(saved, by_id, updated_ids)
    return counts, [p.pk for p in saved]


def _sync_categories(
    papers: Iterable[Paper], by_id: dict[str, PaperRecord], updated_ids: list[int]
) -> None:
    if updated_ids:
        PaperCategory.objects.filter(paper_id__in=updated_ids).delete()
    rows = []
    for paper in papers:
        for index, code in enumerate(dict.fromkeys(by_id[paper.arxiv_id].categories)):
            rows.append(PaperCategory(paper_id=paper.pk, code=code, is_primary=index == 0,
                                      published=paper.published))
    PaperCategory.objects.bulk_create(rows, batch_size=5000)


def _sync_authorships(
    papers: Iterable[Paper], by_id: dict[str, PaperRecord], updated_ids: list[int]
) -> None:
    current: dict[tuple[int, int], Authorship] = {}
    if updated_ids:
        for authorship in Authorship.objects.filter(paper_id__in=updated_ids):
            current[(authorship.paper_id, authorship.position)] = authorship
    to_create: list[Authorship] = []
    to_update: list[Authorship] = []
    keep: set[tuple[int, int]] = set()
    for paper in papers:
        for position, author in enumerate(by_id[paper.arxiv_id].authors, start=1):
            name = author.display[:255]
            key = (paper.pk, position)
            keep.add(key)
            old = current.get(key)
            if old is None:
                to_create.append(Authorship(
                    paper_id=paper.pk, position=position, name=name,
                    keyname=author.keyname[:255], forenames=author.forenames[:255],
                    suffix=author.suffix[:32], affiliation=author.affiliation,
                ))
                continue
            fields = {"name": name, "keyname": author.keyname[:255],
                      "forenames": author.forenames[:255], "suffix": author.suffix[:32],
                      "affiliation": author.affiliation}
            if any(getattr(old, f) != v for f, v in fields.items()):
                if old.name != name:
                    # A different person may now stand at this position: the match must go.
                    old.researcher_id = None
                for f, v in fields.items():
                    setattr(old, f, v)
                to_update.append(old)
    stale = [a.pk for key, a in current.items() if key not in keep]
    if stale:
        Authorship.objects.filter(pk__in=stale).delete()
    if to_update:
        Authorship.objects.bulk_update(
            to_update, ["name", "keyname", "forenames", "suffix", "affiliation", "researcher"],
            batch_size=2000,
        )
    Authorship.objects.bulk_create(to_create, batch_size=5000)


def record_rejection(*, source: str, record_key: str, reason: str, raw: str = "") -> None:
    """Set a malformed record aside; a rerun updates the same row instead of adding another."""
    RejectedRecord.objects.update_or_create(
        source=source[:64], record_key=record_key[:255],
        defaults={"reason": reason, "raw": raw[:2000]},
    )
