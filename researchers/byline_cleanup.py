"""Bylines read again by today's rules (papers.nonpersons), and records that name no one.

Papers imported before the rules hold authorships for affiliations, places and notes ("UK.",
"Socorro", "et al", "for the ATLAS Collaboration"), and matching made researcher records of
some of them ("Astronomy", "A. Building"). `bylines_clean` reads each paper's authorships in
order through `papers.authors.author_list_sources`, removes the entries that name no one (their
text joins the affiliation of the name before, as a new import would write it), marks
collaborations, and marks not-a-person every live record left with no authorship that held
only such entries or whose own name names no one (a record still on a person's byline name is
a person, whatever its source called it).

Every change is in the curators' history (CurationEntry): one BYLINE entry per paper whose
authorships changed, with every row before and after, and one NOT_PERSON entry per record
marked, with the authorships it held. `byline_cleanup_undo` puts either back as it was.
Idempotent: a second run finds nothing to change and writes no entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from papers.authors import AuthorName, author_list_sources, parse_display_name
from papers.models import Authorship, Paper
from papers.nonpersons import is_person
from papers.services import (
    AUTHORSHIP_ROW_FIELDS,
    authorships_link_researcher,
    authorships_unlink_researchers,
    paper_authorships_rewrite,
)
from wovepaper.lib.pagecache import pages_changed

from .institution_members import institutions_refresh, researcher_institution_ids
from .models import CurationEntry, IdentityConflict, Researcher
from .page_figures import researchers_update_stats

CHUNK = 500


@dataclass
class CleanupResult:
    papers_changed: int = 0
    authorships_removed: int = 0
    collaborations_marked: int = 0
    researchers_marked: int = 0
    # What a person reading the command's output wants: each removal, as "arXiv id: name".
    removed: list[str] = field(default_factory=list)
    marked: list[str] = field(default_factory=list)


def _row(a: Authorship) -> dict:
    return {
        "id": a.pk,
        "position": a.position,
        **{f: getattr(a, f) for f in AUTHORSHIP_ROW_FIELDS},
        "researcher": a.researcher_id,
    }


def _name_of(a: Authorship) -> AuthorName:
    # The name as written is what the rules read; the stored split of it is kept below.
    return parse_display_name(a.name, affiliation=a.affiliation)._replace(person=a.is_person)


def _planned_rows(rows: Sequence[Authorship], *, source_list: bool) -> list[dict]:
    """The paper's rows as today's rules write them: each kept row keeps its id (and so its
    researcher, institutions and pin); a name split in two ("CDF Collaboration: T. Aaltonen")
    gives a second row without an id. A row whose name changed loses its researcher."""
    planned: list[dict] = []
    used: set[int] = set()
    for position, (source, author) in enumerate(
        author_list_sources([_name_of(a) for a in rows], source_list=source_list), start=1
    ):
        old = rows[source]
        same_name = author.display == old.name
        row = {
            "position": position,
            "name": author.display[:255],
            "keyname": old.keyname if same_name else author.keyname[:255],
            "forenames": old.forenames if same_name else author.forenames[:255],
            "suffix": old.suffix if same_name else author.suffix[:32],
            "affiliation": author.affiliation,
            "is_person": author.person,
            "researcher": None,
        }
        if old.pk not in used:
            used.add(old.pk)
            row["id"] = old.pk
            if row["name"] == old.name and author.person:
                row["researcher"] = old.researcher_id
        planned.append(row)
    return planned


def _unchanged(rows: Sequence[Authorship], planned: list[dict]) -> bool:
    return len(rows) == len(planned) and all(
        _row(a) == p for a, p in zip(rows, planned, strict=True)
    )


def _clean_paper(
    paper: Paper, rows: list[Authorship], result: CleanupResult, touched: set[int]
) -> None:
    # A paper without arXiv's record (no v1 date) carries a source's author list (the demo
    # writes Semantic Scholar's or OpenAlex's): rule 6 of papers.nonpersons applies.
    planned = _planned_rows(rows, source_list=paper.published is None)
    if _unchanged(rows, planned):
        return
    kept = {p["id"] for p in planned if p.get("id")}
    removed = [a for a in rows if a.pk not in kept]
    before = [_row(a) for a in rows]
    involved = {a.researcher_id for a in rows if a.researcher_id}
    paper_authorships_rewrite(paper_id=paper.pk, rows=planned)
    after = [_row(a) for a in Authorship.objects.filter(paper_id=paper.pk).order_by("position")]
    entry = CurationEntry.objects.create(
        action=CurationEntry.BYLINE,
        researcher=None,
        before={"paper": paper.pk, "arxiv_id": paper.arxiv_id, "authorships": before},
        after={"paper": paper.pk, "arxiv_id": paper.arxiv_id, "authorships": after},
        note="Byline read again: entries that name no one removed (papers.nonpersons).",
    )
    if involved:
        entry.researchers.set(sorted(involved))
    touched |= involved
    result.papers_changed += 1
    result.authorships_removed += len(removed)
    result.collaborations_marked += max(
        0, sum(1 for p in planned if not p["is_person"]) - sum(1 for a in rows if not a.is_person)
    )
    result.removed.extend(f"{paper.arxiv_id}: {a.name}" for a in removed)


def _mark_not_person(record: Researcher, result: CleanupResult) -> None:
    held = list(Authorship.objects.filter(researcher=record).order_by("paper_id", "position"))
    # The queue's open conflicts about it would propose merging it with another such record.
    conflicts = IdentityConflict.objects.filter(
        Q(researcher=record) | Q(other_researcher=record), status=IdentityConflict.OPEN
    )
    conflict_ids = sorted(conflicts.values_list("pk", flat=True))
    conflicts.update(status=IdentityConflict.DISMISSED)
    entry = CurationEntry.objects.create(
        action=CurationEntry.NOT_PERSON,
        researcher=record,
        before={
            "researcher": record.pk,
            "is_person": True,
            "authorships": [a.pk for a in held],
            "open_conflicts": conflict_ids,
        },
        after={"researcher": record.pk, "is_person": False},
        note=f"{record.display_name!r} names no person (papers.nonpersons).",
    )
    entry.researchers.set([record.pk])
    authorships_unlink_researchers(authorship_ids=[a.pk for a in held])
    Researcher.objects.filter(pk=record.pk).update(is_person=False, modified_at=timezone.now())
    pages_changed("paper", {a.paper_id for a in held})
    result.researchers_marked += 1
    result.marked.append(f"{record.pk}: {record.display_name}")


def bylines_clean(*, paper_ids: Iterable[int] | None = None) -> CleanupResult:
    """Read every paper's authorships again (or those of `paper_ids`) and mark the records
    that name no one; see the module's docstring. Idempotent."""
    result = CleanupResult()
    touched: set[int] = set()
    papers = Paper.objects.order_by("pk")
    if paper_ids is not None:
        papers = papers.filter(pk__in=list(paper_ids))
    ids = list(papers.values_list("pk", flat=True))
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        by_paper: dict[int, list[Authorship]] = {}
        for a in Authorship.objects.filter(paper_id__in=chunk).order_by("paper_id", "position"):
            by_paper.setdefault(a.paper_id, []).append(a)
        with transaction.atomic():
            for paper in Paper.objects.filter(pk__in=chunk).only("pk", "arxiv_id", "published"):
                rows = by_paper.get(paper.pk, [])
                if rows:
                    _clean_paper(paper, rows, result, touched)
    with transaction.atomic():
        live = Researcher.objects.filter(merged_into__isnull=True, is_person=True)
        # Records that hold no authorship now: those that held only entries removed above, and
        # those whose own name names no one (made by an earlier matching from a source's slip).
        # A record still on a person's byline name is a person whatever its source called it
        # ("Jim Q. Smith The University of Warwick").
        unlinked = live.exclude(
            pk__in=Authorship.objects.filter(researcher__isnull=False).values("researcher_id")
        )
        suspects = list(unlinked.filter(pk__in=touched)) + [
            r
            for r in unlinked.exclude(pk__in=touched).only("pk", "display_name")
            if not is_person(r.display_name)
        ]
        for record in suspects:
            _mark_not_person(record, result)
            touched.add(record.pk)
    if touched:
        researchers_update_stats(sorted(touched))
        _refresh_institutions(touched)
    pages_changed("researcher", touched)
    return result


def _refresh_institutions(researcher_ids: set[int]) -> None:
    institutions_refresh(researcher_institution_ids(researcher_ids))


@transaction.atomic
def byline_cleanup_undo(*, entry_id: int, actor: User | None = None) -> CurationEntry:
    """Put back what one BYLINE or NOT_PERSON entry changed, and record that as a new entry
    (the old one is marked undone). Raises ValueError for any other entry or one undone."""
    entry = CurationEntry.objects.select_for_update().get(pk=entry_id)
    if entry.undone_by_id or entry.action not in (CurationEntry.BYLINE, CurationEntry.NOT_PERSON):
        raise ValueError(f"Entry {entry_id} is no byline cleanup, or was undone already.")
    before, after = entry.before or {}, entry.after or {}
    if entry.action == CurationEntry.BYLINE:
        paper_authorships_rewrite(paper_id=before["paper"], rows=before["authorships"])
        involved = sorted({r["researcher"] for r in before["authorships"] if r["researcher"]})
    else:
        involved = [before["researcher"]]
        Researcher.objects.filter(pk=before["researcher"]).update(
            is_person=True, modified_at=timezone.now()
        )
        still_unlinked = Authorship.objects.filter(
            pk__in=before["authorships"], researcher__isnull=True
        ).values_list("pk", flat=True)
        authorships_link_researcher(
            authorship_ids=list(still_unlinked), researcher_id=before["researcher"]
        )
        IdentityConflict.objects.filter(
            pk__in=before.get("open_conflicts", []), status=IdentityConflict.DISMISSED
        ).update(status=IdentityConflict.OPEN)
    undo = CurationEntry.objects.create(
        action=entry.action,
        actor=actor if actor is not None and actor.is_authenticated else None,
        researcher=entry.researcher,
        before=after,
        after=before,
        note=f"Undoes entry {entry.pk}.",
    )
    if involved:
        undo.researchers.set(involved)
    entry.undone_by = undo
    entry.save(update_fields=["undone_by"])
    researchers_update_stats(involved)
    pages_changed("researcher", involved)
    return undo
