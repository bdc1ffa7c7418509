"""A list as a citation file (BibTeX, RIS, CSL-JSON) for its page, its shared link and the API:
the papers saved last first, up to LIST_EXPORT_MAX, with the owner's notes in the owner's own
exports only."""

from __future__ import annotations

from django.http import HttpResponse

from papers.citations.export import citation_response
from papers.models import Paper

from .lists import saved_papers
from .models import ReadingList

# A list's export holds its newest saved papers up to this many, and says so when cut.
LIST_EXPORT_MAX = 2000


def reading_list_citation_export(
    reading_list: ReadingList, *, limit: int
) -> tuple[list[Paper], str, dict[int, str]]:
    """A list's papers for its citation export (site, shared link and API), saved last first,
    deleted papers left out; the note that says the export was cut at `limit` (empty when it
    holds them all); and the reader's notes by paper id, for the owner's own exports only (a
    shared list's link shows no note). One query."""
    kept = saved_papers(reading_list=reading_list).filter(paper__is_deleted=False)
    rows = list(kept[: limit + 1])
    notes = {row.paper_id: row.note for row in rows[:limit] if row.note}
    if len(rows) <= limit:
        return [row.paper for row in rows], "", notes
    return (
        [row.paper for row in rows[:limit]],
        f"The {limit} papers saved last in {reading_list.name}; "
        "earlier ones are not in this export.",
        notes,
    )


def list_export(
    reading_list: ReadingList, extension: str, filename: str, *, with_notes: bool
) -> HttpResponse:
    papers, cut_note, notes = reading_list_citation_export(reading_list, limit=LIST_EXPORT_MAX)
    return citation_response(
        papers,
        extension=extension,
        filename=filename,
        cut_note=cut_note,
        notes=notes if with_notes else None,
    )
