"""Writes to papers that other apps' flows make (e.g. matching storing what the sources say)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time

from django.db.models import F
from django.utils import timezone

from wovepaper.lib.pagecache import pages_changed

from .models import Authorship, Paper


@dataclass(frozen=True)
class PaperSourceRecord:
    """What the sources say about one paper: its ids there and its citation count, with the
    source of the count ("s2" or "openalex") and when it was read."""

    paper_id: int
    semantic_scholar_id: str | None
    openalex_id: str | None
    cited_by_count: int | None
    cited_by_source: str | None = None
    cited_by_updated_at: datetime | None = None


def papers_store_source_records(*, records: Sequence[PaperSourceRecord]) -> None:
    """Store each paper's source ids and citation count. Idempotent.

    The ids are unique on Paper: an id another paper holds (an arXiv duplicate), or one given
    to an earlier paper of `records`, is not copied and that paper's id is left empty.
    """
    if not records:
        return
    own = [r.paper_id for r in records]
    taken_s2 = set(
        Paper.objects.filter(
            semantic_scholar_id__in=[
                r.semantic_scholar_id for r in records if r.semantic_scholar_id
            ]
        )
        .exclude(pk__in=own)
        .values_list("semantic_scholar_id", flat=True)
    )
    taken_oa = set(
        Paper.objects.filter(openalex_id__in=[r.openalex_id for r in records if r.openalex_id])
        .exclude(pk__in=own)
        .values_list("openalex_id", flat=True)
    )
    updates = []
    now = timezone.now()
    for record in records:
        row = Paper(
            pk=record.paper_id,
            modified_at=now,
            semantic_scholar_id=None,
            openalex_id=None,
            cited_by_count=record.cited_by_count,
            cited_by_source=record.cited_by_source if record.cited_by_count is not None else None,
            cited_by_updated_at=record.cited_by_updated_at
            if record.cited_by_count is not None
            else None,
        )
        if record.semantic_scholar_id and record.semantic_scholar_id not in taken_s2:
            row.semantic_scholar_id = record.semantic_scholar_id
            taken_s2.add(record.semantic_scholar_id)
        if record.openalex_id and record.openalex_id not in taken_oa:
            row.openalex_id = record.openalex_id
            taken_oa.add(record.openalex_id)
        updates.append(row)
    # Clear the ids first so that two papers of the batch can swap them without a collision.
    Paper.objects.filter(pk__in=own).update(semantic_scholar_id=None, openalex_id=None)
    pages_changed("paper", own)
    Paper.objects.bulk_update(
        updates,
        [
            "semantic_scholar_id",
            "openalex_id",
            "cited_by_count",
            "cited_by_source",
            "cited_by_updated_at",
            "modified_at",
        ],
        batch_size=500,
    )


# The researcher link of an Authorship is papers' row, written by researchers' flows (matching,
# curation): they write it only through these, so papers knows every way it changes.


def papers_cited_by_dated(*, recorded: dict[tuple[str, str], date]) -> int:
    """Citation counts a source gave on a known day (a recording's) are as of that day:
    `recorded` maps (source, arXiv id) to it, source "s2" or "openalex" as `cited_by_source`.
    Returns how many papers' counts were dated."""
    wanted = {arxiv_id for _, arxiv_id in recorded}
    dated = []
    for paper in Paper.objects.filter(arxiv_id__in=wanted, cited_by_count__isnull=False).only(
        "pk", "arxiv_id", "cited_by_source"
    ):
        day = recorded.get((paper.cited_by_source or "", paper.arxiv_id))
        if day is not None:
            paper.cited_by_updated_at = datetime.combine(day, time(), tzinfo=UTC)
            dated.append(paper)
    Paper.objects.bulk_update(dated, ["cited_by_updated_at"], batch_size=500)
    pages_changed("paper", [p.pk for p in dated])
    return len(dated)


def papers_touch(*, paper_ids: Iterable[int], now: datetime | None = None) -> None:
    """Another part changed what these papers' records say (who wrote them, a pinned link):
    their Last-Modified moves and their cached pages go."""
    ids = set(paper_ids)
    if not ids:
        return
    Paper.objects.filter(pk__in=ids).update(modified_at=now or timezone.now())
    pages_changed("paper", ids)


def authorships_link_researcher(*, authorship_ids: Sequence[int], researcher_id: int) -> int:
    """Point these authorships at `researcher_id`, their match fields (when, how, how sure)
    left as they are: a curator's merge, split or move. One UPDATE, however many ids; callers
    chunk long lists. Idempotent. Returns the rows updated."""
    return Authorship.objects.filter(pk__in=authorship_ids).update(researcher_id=researcher_id)


def authorship_unlink_researcher(*, authorship_id: int) -> int:
    """Take the authorship off its researcher, with how it had been matched. One UPDATE.
    Idempotent. Returns the rows updated."""
    return Authorship.objects.filter(pk=authorship_id).update(
        researcher=None, matched_at=None, match_method="", match_confidence=None
    )


def authorship_confirm_match(*, authorship_id: int) -> int:
    """A curator checked the authorship's link: it is a curator's, certain. The link itself
    is not touched. One UPDATE. Idempotent. Returns the rows updated."""
    return Authorship.objects.filter(pk=authorship_id).update(
        match_method=Authorship.MatchMethod.CURATOR, match_confidence=1.0
    )


def authorships_save_match_links(*, authorships: Sequence[Authorship]) -> None:
    """Write matching's outcome as set on these objects: researcher, matched_at, match_method,
    match_confidence, 1,000 rows an UPDATE (none for an empty list). Idempotent."""
    Authorship.objects.bulk_update(
        authorships,
        ["researcher", "matched_at", "match_method", "match_confidence"],
        batch_size=1000,
    )


def authorships_unlink_researchers(*, authorship_ids: Sequence[int]) -> int:
    """Take these authorships off their researchers, with how they had been matched: records
    found to name no one (researchers.byline_cleanup). One UPDATE. Idempotent."""
    return Authorship.objects.filter(pk__in=authorship_ids).update(
        researcher=None, matched_at=None, match_method="", match_confidence=None
    )


# The byline's own columns of an authorship, as paper_authorships_rewrite writes them.
AUTHORSHIP_ROW_FIELDS = ("name", "keyname", "forenames", "suffix", "affiliation", "is_person")
# Positions are unique per paper: a rewrite moves the kept rows out of the way first.
_POSITION_SHIFT = 20_000


def paper_authorships_rewrite(*, paper_id: int, rows: Sequence[dict]) -> None:
    """Make the paper's authorships exactly `rows` (dicts of "position", AUTHORSHIP_ROW_FIELDS,
    "researcher" and, for a row kept, its "id"): rows not named are deleted, the others updated
    in place (their institutions and pins stay), new ones created; a researcher that no longer
    exists is left out. The byline cleanup and its undo (researchers.byline_cleanup).
    Idempotent."""
    keep = {p["id"] for p in rows if p.get("id")}
    current = Authorship.objects.filter(paper_id=paper_id)
    current.exclude(pk__in=keep).delete()
    current.update(position=F("position") + _POSITION_SHIFT)
    existing = Authorship.objects.in_bulk(list(keep))
    # papers sits below researchers in the dependency order: the model is read off the field.
    researchers = Authorship._meta.get_field("researcher").related_model._default_manager
    to_update, to_create = [], []
    for p in rows:
        values = {f: p[f] for f in AUTHORSHIP_ROW_FIELDS}
        researcher = p.get("researcher")
        if researcher is not None and not researchers.filter(pk=researcher).exists():
            researcher = None
        row = existing.get(p.get("id") or 0)
        if row is None:
            to_create.append(
                Authorship(
                    pk=p.get("id"),
                    paper_id=paper_id,
                    position=p["position"],
                    researcher_id=researcher,
                    **values,
                )
            )
            continue
        for f, v in values.items():
            setattr(row, f, v)
        if row.researcher_id != researcher:
            row.researcher_id = researcher
            row.matched_at = timezone.now() if researcher else None
            row.match_method, row.match_confidence = "", None
        row.position = p["position"]
        to_update.append(row)
    Authorship.objects.bulk_update(
        to_update,
        [
            *AUTHORSHIP_ROW_FIELDS,
            "position",
            "researcher",
            "matched_at",
            "match_method",
            "match_confidence",
        ],
        batch_size=1000,
    )
    Authorship.objects.bulk_create(to_create, batch_size=1000)
    Paper.objects.filter(pk=paper_id).update(modified_at=timezone.now())
