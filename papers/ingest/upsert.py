"""The one idempotent upsert that both the snapshot import and the OAI-PMH harvest go through."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.db.models import Field, Model
from django.utils import timezone
from slugify import slugify, smart_truncate

from wovepaper.lib.pagecache import LISTS, pages_changed

from ..authors import AuthorName
from ..models import Authorship, Paper, PaperCategory, PaperChange, RejectedRecord
from .records import PaperRecord

PAPER_UPDATE_FIELDS = [
    "version",
    "title",
    "abstract",
    "authors",
    "categories",
    "primary_category",
    "published",
    "published_precision",
    "updated",
    "doi",
    "journal_ref",
    "comments",
    "report_no",
    "license",
    "submitter",
    "record_source",
    "slug",
    "is_withdrawn",
    "is_deleted",
    "source_hash",
    "modified_at",
]
# What _paper_row gives, in its order: every stored field but the timestamps.
PAPER_VALUE_FIELDS = ["arxiv_id", *PAPER_UPDATE_FIELDS[:-1]]


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
        return {
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "rejected": self.rejected,
        }


# python-slugify's steps that can change an ASCII title without "&" (no entity to decode, and
# nothing for its Unicode normalisation and transliteration to do).
_SLUG_QUOTES = re.compile(r"[']+")
_SLUG_NUMBER_COMMA = re.compile(r"(?<=\d),(?=\d)")
_SLUG_DISALLOWED = re.compile(r"[^-a-z0-9]+")
_SLUG_DASHES = re.compile(r"-{2,}")


def paper_slug(title: str) -> str:
    """python-slugify's slug of the title (80 characters at most, cut at a word boundary).

    Most titles are ASCII without an "&": for them its pipeline comes down to the four
    substitutions below, which give the same slug in half its time (its entity pattern alone is an
    alternation of every HTML entity name, tried at every character).
    tests/papers/ingest/test_ingest_bulk.py compares the two over every title in the sample.
    """
    if title.isascii() and "&" not in title:
        text = (_SLUG_QUOTES.sub("-", title) if "'" in title else title).lower()
        if "," in text:
            text = _SLUG_NUMBER_COMMA.sub("", text)
        text = _SLUG_DASHES.sub("-", _SLUG_DISALLOWED.sub("-", text)).strip("-")
        if len(text) < 80:  # what smart_truncate returns for it, without the call
            return text or "paper"
        return smart_truncate(text, 80, word_boundary=True, separator="-") or "paper"
    return slugify(title, max_length=80, word_boundary=True) or "paper"


def quote_name(name: str) -> str:
    return connection.ops.quote_name(name)


def _paper_row(record: PaperRecord, digest: str) -> tuple:
    """The Paper columns for a record, in PAPER_VALUE_FIELDS order: a tuple, since the COPY
    path writes one for every paper and needs no names."""
    categories = record.categories
    published, precision = record.first_version_date()
    return (
        record.arxiv_id,
        record.version,
        record.title,
        record.abstract,
        record.authors_raw or ", ".join(a.display for a in record.authors),
        " ".join(categories),
        categories[0] if categories else "",
        published,
        precision,
        record.updated,
        record.doi,
        record.journal_ref,
        record.comments,
        record.report_no,
        record.license,
        record.submitter,
        record.record_source or None,
        paper_slug(record.title),
        record.is_withdrawn,
        record.is_deleted,
        digest,
    )


def _paper_values(record: PaperRecord, digest: str) -> dict[str, object]:
    """The Paper columns for a record by name, for the ORM path."""
    return dict(zip(PAPER_VALUE_FIELDS, _paper_row(record, digest), strict=True))


def _authorship_values(author: AuthorName) -> tuple[str, str, str, str, str, bool]:
    """(name, keyname, forenames, suffix, affiliation, is_person), cut to the column sizes."""
    return (
        author.display[:255],
        author.keyname[:255],
        author.forenames[:255],
        author.suffix[:32],
        author.affiliation,
        author.person,
    )


@dataclass(slots=True)
class UpsertResult:
    counts: UpsertCounts
    # Papers created or changed, in the order of the records (what papers_upsert returns).
    ids: list[int]
    # The papers of `ids` this call created by a bulk path, each with the record it was made
    # from, so that a caller can index them without reading them back.
    created: list[tuple[int, PaperRecord]]


def papers_upsert(
    records: Sequence[PaperRecord], *, first_load: bool = False
) -> tuple[UpsertCounts, list[int]]:
    """papers_upsert_records' counts and ids (see there)."""
    result = papers_upsert_records(records, first_load=first_load)
    return result.counts, result.ids


def papers_upsert_records(
    records: Sequence[PaperRecord], *, first_load: bool = False
) -> UpsertResult:
    """Insert or update a batch of papers with their authorships and categories.

    Idempotent: a record whose metadata digest is unchanged is not touched. For a changed paper,
    authorships at positions whose name is unchanged keep their matched researcher; positions
    whose name changed lose the match; positions past the new byline are removed.
    Returns the counts and the ids of papers that were created or changed (for matching), in
    the order of the records.

    Brand-new papers take a bulk path: on PostgreSQL COPY into the three tables (ids reserved
    from the sequence first), elsewhere bulk_create. Should another writer insert one of those
    ids meanwhile, the unique constraint stops the COPY and the batch takes the ON CONFLICT
    path instead, so the outcome is the same either way.

    `first_load` (a caller that found the papers table empty when it started, such as the
    first import of a snapshot) skips looking for stored papers on PostgreSQL and COPYs the
    batch straight away; should any be there after all (a line repeated in a later batch,
    another writer), the unique constraint stops the COPY and the batch takes the general path.
    """
    counts = UpsertCounts()
    # The last record for an id wins, as it would if they came one after another.
    by_id: dict[str, PaperRecord] = {r.arxiv_id: r for r in records}
    if not by_id:
        return UpsertResult(counts, [], [])
    digests = {arxiv_id: r.digest() for arxiv_id, r in by_id.items()}
    with transaction.atomic():
        if first_load and connection.vendor == "postgresql":
            try:
                with transaction.atomic():  # a savepoint, as in _papers_insert_new
                    copied = _papers_copy(list(by_id.values()), digests)
            except IntegrityError:
                pass
            else:
                counts.created = len(copied)
                pages_changed(LISTS)
                pairs = [(pk, by_id[arxiv_id]) for arxiv_id, pk in copied.items()]
                return UpsertResult(counts, list(copied.values()), pairs)
        existing = _stored_digests(list(by_id))
        new: list[PaperRecord] = []
        changed: list[PaperRecord] = []
        for arxiv_id, record in by_id.items():
            if arxiv_id not in existing:
                new.append(record)
            elif existing[arxiv_id] == digests[arxiv_id]:
                counts.unchanged += 1
            else:
                changed.append(record)
        counts.created, counts.updated = len(new), len(changed)
        if not new and not changed:
            return UpsertResult(counts, [], [])
        pks: dict[str, int] = {}
        created: list[tuple[int, PaperRecord]] = []
        if new:
            inserted, fresh = _papers_insert_new(new, digests)
            pks.update(inserted)
            if fresh:
                created = [(inserted[r.arxiv_id], r) for r in new]
        if changed:
            before = _announced_fields([r.arxiv_id for r in changed])
            pks.update(_papers_write(changed, digests, existing=set(existing)))
            _record_changes(changed, before, pks)
        pages_changed("paper", [pks[r.arxiv_id] for r in changed if r.arxiv_id in pks])
        pages_changed(LISTS)
    return UpsertResult(counts, [pks[arxiv_id] for arxiv_id in by_id if arxiv_id in pks], created)


ANNOUNCED_FIELDS = ["version", "is_withdrawn", "journal_ref", "doi"]


def _announced_fields(arxiv_ids: list[str]) -> dict[str, tuple]:
    """The fields readers are told about, as stored before a changed batch is written: one
    query for the changed papers only (an unchanged record never gets here)."""
    rows = Paper.objects.filter(arxiv_id__in=arxiv_ids).values_list("arxiv_id", *ANNOUNCED_FIELDS)
    return {row[0]: row[1:] for row in rows}


def _record_changes(
    records: list[PaperRecord], before: dict[str, tuple], pks: dict[str, int]
) -> int:
    """Keep what changed that readers are told of (PaperChange): a higher version, a
    withdrawal, a journal reference or DOI where there was none or another. One bulk insert."""
    now = timezone.now()
    found: list[PaperChange] = []
    for record in records:
        if record.arxiv_id not in before or record.arxiv_id not in pks:
            continue
        version, was_withdrawn, journal_ref, doi = before[record.arxiv_id]
        paper_id = pks[record.arxiv_id]

        def change(kind: str, detail: str = "", paper_id: int = paper_id) -> PaperChange:
            return PaperChange(paper_id=paper_id, kind=kind, detail=detail, recorded_at=now)

        if record.version > version:
            found.append(change(PaperChange.Kind.VERSION, str(record.version)))
        if record.is_withdrawn and not was_withdrawn:
            found.append(change(PaperChange.Kind.WITHDRAWN))
        if record.journal_ref and record.journal_ref != journal_ref:
            found.append(change(PaperChange.Kind.PUBLISHED, record.journal_ref))
        elif record.doi and record.doi != doi and not record.journal_ref:
            found.append(change(PaperChange.Kind.PUBLISHED, f"doi:{record.doi}"))
    PaperChange.objects.bulk_create(found)
    return len(found)


def _stored_digests(arxiv_ids: list[str]) -> dict[str, str]:
    """arxiv_id -> source_hash of the papers already stored. On PostgreSQL one array parameter
    instead of `arxiv_id__in`'s thousands of placeholders, which cost more to build than the
    query takes to run."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT arxiv_id, source_hash FROM {quote_name(Paper._meta.db_table)} "
                "WHERE arxiv_id = ANY(%s)",
                [arxiv_ids],
            )
            return dict(cursor.fetchall())
    return dict(Paper.objects.filter(arxiv_id__in=arxiv_ids).values_list("arxiv_id", "source_hash"))


def _papers_insert_new(
    records: list[PaperRecord], digests: dict[str, str]
) -> tuple[dict[str, int], bool]:
    """arxiv_id -> pk of the papers written, and whether each was created from its record
    (False when a lost race made some of them updates of another writer's rows)."""
    if connection.vendor == "postgresql":
        try:
            with transaction.atomic():  # a savepoint, so a lost race leaves the batch usable
                return _papers_copy(records, digests), True
        except IntegrityError:
            existing = set(_stored_digests([r.arxiv_id for r in records]))
            return _papers_write(records, digests, existing=existing), False
    return _papers_write(records, digests, existing=set()), True


def _papers_write(
    records: list[PaperRecord], digests: dict[str, str], *, existing: set[str]
) -> dict[str, int]:
    """The ORM path: bulk INSERT ... ON CONFLICT (arxiv_id) DO UPDATE, then reconcile the
    categories and authorships of the papers that were already there."""
    by_id = {r.arxiv_id: r for r in records}
    saved = Paper.objects.bulk_create(
        [Paper(**_paper_values(r, digests[r.arxiv_id])) for r in records],
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
    return {p.arxiv_id: p.pk for p in saved}


def _columns(model: type[Model], names: Sequence[str]) -> str:
    return ", ".join(quote_name(_column(model, name)) for name in names)


def _column(model: type[Model], name: str) -> str:
    field = model._meta.get_field(name)
    if not isinstance(field, Field) or not field.column:
        raise ValueError(f"{model.__name__}.{name} is not a column")
    return field.column


_PAPER_COPY_FIELDS = ["id", *PAPER_VALUE_FIELDS, "modified_at", "created_at"]
_CATEGORY_COPY_FIELDS = ["paper", "code", "is_primary", "published"]
_AUTHORSHIP_COPY_FIELDS = [
    "paper",
    "position",
    "name",
    "keyname",
    "forenames",
    "suffix",
    "affiliation",
    "is_person",
]


def _papers_copy(records: list[PaperRecord], digests: dict[str, str]) -> dict[str, int]:
    """PostgreSQL bulk path for papers not in the database: COPY rows into papers, categories
    and authorships, with paper ids reserved from the sequence so the child rows can point at
    them without reading anything back. Columns left out take their database default (NULL for
    the matched researcher and the external ids). The search index and constraints apply to
    COPY as to INSERT."""
    now = timezone.now()
    paper_table = quote_name(Paper._meta.db_table)
    with connection.cursor() as cursor, connection.wrap_database_errors:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [Paper._meta.db_table, len(records)],
        )
        pks = [row[0] for row in cursor.fetchall()]
        with cursor.copy(
            f"COPY {paper_table} ({_columns(Paper, _PAPER_COPY_FIELDS)}) FROM STDIN"
        ) as copy:
            for pk, record in zip(pks, records, strict=True):
                copy.write_row((pk, *_paper_row(record, digests[record.arxiv_id]), now, now))
        with cursor.copy(
            f"COPY {quote_name(PaperCategory._meta.db_table)} "
            f"({_columns(PaperCategory, _CATEGORY_COPY_FIELDS)}) FROM STDIN"
        ) as copy:
            for pk, record in zip(pks, records, strict=True):
                for index, code in enumerate(dict.fromkeys(record.categories)):
                    copy.write_row((pk, code, index == 0, record.first_version_date()[0]))
        with cursor.copy(
            f"COPY {quote_name(Authorship._meta.db_table)} "
            f"({_columns(Authorship, _AUTHORSHIP_COPY_FIELDS)}) FROM STDIN"
        ) as copy:
            for pk, record in zip(pks, records, strict=True):
                for position, author in enumerate(record.authors, start=1):
                    copy.write_row((pk, position, *_authorship_values(author)))
    return {record.arxiv_id: pk for pk, record in zip(pks, records, strict=True)}


def _sync_categories(
    papers: Iterable[Paper], by_id: dict[str, PaperRecord], updated_ids: list[int]
) -> None:
    if updated_ids:
        PaperCategory.objects.filter(paper_id__in=updated_ids).delete()
    rows = []
    for paper in papers:
        for index, code in enumerate(dict.fromkeys(by_id[paper.arxiv_id].categories)):
            rows.append(
                PaperCategory(
                    paper_id=paper.pk, code=code, is_primary=index == 0, published=paper.published
                )
            )
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
            fields = dict(zip(_AUTHORSHIP_COPY_FIELDS[2:], _authorship_values(author), strict=True))
            name = fields["name"]
            key = (paper.pk, position)
            keep.add(key)
            old = current.get(key)
            if old is None:
                to_create.append(Authorship(paper_id=paper.pk, position=position, **fields))
                continue
            if any(getattr(old, f) != v for f, v in fields.items()):
                if old.name != name:
                    # A different person may now stand at this position: the match must go.
                    old.researcher_id = None
                    old.matched_at = None
                    # And with it how sure it was: "exact, 1.00" beside no record is false.
                    old.match_confidence = None
                    old.match_method = ""
                for f, v in fields.items():
                    setattr(old, f, v)
                to_update.append(old)
    stale = [a.pk for key, a in current.items() if key not in keep]
    if stale:
        Authorship.objects.filter(pk__in=stale).delete()
    if to_update:
        Authorship.objects.bulk_update(
            to_update,
            [
                *_AUTHORSHIP_COPY_FIELDS[2:],
                "researcher",
                "matched_at",
                "match_confidence",
                "match_method",
            ],
            batch_size=2000,
        )
    Authorship.objects.bulk_create(to_create, batch_size=5000)


def record_rejection(*, source: str, record_key: str, reason: str, raw: str = "") -> None:
    """Set a malformed record aside; a rerun updates the same row instead of adding another."""
    RejectedRecord.objects.update_or_create(
        source=source[:64],
        record_key=record_key[:255],
        defaults={"reason": reason, "raw": raw[:2000]},
    )
