"""Why a page says who wrote what, for everyone: the sources' records side by side with where
they disagree, the same-name records with the evidence for and against, and the public history
of curators' decisions (what and when; who is for staff only). Each function runs a fixed number
of queries whatever the record's size or number of homonyms."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Q

from ..models import CurationEntry, IdentityConflict, Researcher, ResearcherExternalId
from ..names import name_key
from ..selectors import EXTERNAL_URLS, researcher_same_name
from .queue import SameNameExplained, same_name_explained
from .same_person import NOTE_PREFIX as RULE_NOTE_PREFIX

SOURCE_LABELS = dict(ResearcherExternalId.SOURCES)
# Citation totals further apart than this factor (and by more than FAR_APART_MIN) are flagged:
# the sources then disagree about which works are this person's.
FAR_APART_FACTOR = 2.0
FAR_APART_MIN = 50
CONFLICTS_SHOWN = 10
HISTORY_SHOWN = 30


@dataclass
class SourceRecord:
    source: str
    label: str
    value: str
    url: str
    origin: str
    name: str
    h_index: int | None
    citation_count: int | None
    works_count: int | None
    fetched_at: datetime | None
    linked_at: datetime | None


@dataclass
class IdentityPanel:
    records: list[SourceRecord]
    disagreements: list[dict] = field(default_factory=list)


def _bare(value: str) -> str:
    # Sources hand out both bare ids and URLs (https://openalex.org/A…, https://orcid.org/…).
    return value.rstrip("/").rsplit("/", 1)[-1]


def researcher_identity_panel(researcher: Researcher) -> IdentityPanel:
    """Each source's record of this researcher and the sources' disagreements (two queries)."""
    records = []
    for ext in researcher.external_ids.order_by("source", "value"):
        value = _bare(ext.value)
        template = EXTERNAL_URLS.get(ext.source)
        records.append(
            SourceRecord(
                source=ext.source,
                label=SOURCE_LABELS.get(ext.source, ext.source),
                value=value,
                url=template.format(value) if template else "",
                origin=ext.get_origin_display(),
                name=ext.name,
                h_index=ext.h_index,
                citation_count=ext.citation_count,
                works_count=ext.works_count,
                fetched_at=ext.fetched_at,
                linked_at=ext.created_at,
            )
        )
    panel = IdentityPanel(records=records)
    panel.disagreements.extend(_figure_disagreements(records))
    panel.disagreements.extend(_name_disagreements(researcher, records))
    conflicts = (
        IdentityConflict.objects.filter(
            Q(researcher=researcher) | Q(other_researcher=researcher),
            status=IdentityConflict.OPEN,
        )
        .select_related("researcher", "other_researcher", "paper")
        .order_by("-created_at", "-pk")[:CONFLICTS_SHOWN]
    )
    for conflict in conflicts:
        other = (
            conflict.other_researcher
            if conflict.researcher_id == researcher.pk
            else conflict.researcher
        )
        panel.disagreements.append(
            {
                "kind": "conflict",
                "text": conflict.get_kind_display(),
                "other": other,
                "paper": conflict.paper,
                "name_as_written": conflict.name_as_written,
                "ids": [
                    (label, value)
                    for label, value in (
                        ("Semantic Scholar", conflict.s2_id),
                        ("OpenAlex", conflict.openalex_id),
                        ("ORCID", conflict.orcid),
                    )
                    if value
                ],
            }
        )
    return panel


def _figure_disagreements(records: list[SourceRecord]) -> list[dict]:
    counted = [r for r in records if r.citation_count is not None]
    out = []
    for i, a in enumerate(counted):
        for b in counted[i + 1 :]:
            low, high = sorted((a.citation_count or 0, b.citation_count or 0))
            if high - low >= FAR_APART_MIN and high > FAR_APART_FACTOR * max(low, 1):
                out.append(
                    {
                        "kind": "figures",
                        "text": (
                            f"{a.label} counts {a.citation_count:,} citations, {b.label} "
                            f"{b.citation_count:,}: the sources disagree about which works "
                            "are this person's."
                        ),
                    }
                )
    return out


def _name_disagreements(researcher: Researcher, records: list[SourceRecord]) -> list[dict]:
    spelled = {
        r.label: r.name for r in records if r.name and name_key(r.name) != researcher.name_key
    }
    if not spelled:
        return []
    names = "; ".join(f"{label}: {name}" for label, name in spelled.items())
    return [{"kind": "names", "text": f"The sources spell the name differently ({names})."}]


def researcher_same_name_explained(
    researcher: Researcher, *, limit: int = 8
) -> list[SameNameExplained]:
    """The live same-name records with the evidence for and against one person and the verdict
    so far (curated as distinct, or undecided). Merged records are in the history instead."""
    return same_name_explained(researcher, researcher_same_name(researcher, limit=limit))


@dataclass
class HistoryItem:
    action: str
    label: str
    at: datetime
    text: str
    records: list[Researcher]
    undone: bool
    # Why, as the researcher or the curators gave it publicly (owner changes and their undoing
    # only: a curator's own note stays in the staff's history).
    reason: str = ""


def researcher_public_history(researcher: Researcher) -> list[HistoryItem]:
    """Curators' merges, splits, moves and "not the same person" decisions touching this record,
    newest first: what and when, never who (two queries)."""
    entries = list(researcher.curation_entries.order_by("-created_at", "-pk")[:HISTORY_SHOWN])
    mentioned: set[int] = set()
    for entry in entries:
        mentioned.update(i for i in _entry_record_ids(entry) if i is not None)
    names = {r.pk: r for r in Researcher.objects.filter(pk__in=mentioned)} if mentioned else {}
    return [_history_item(entry, names) for entry in entries]


def _entry_record_ids(entry: CurationEntry) -> list[int | None]:
    """The records an entry names; None where its JSON lacks one (_names skips those)."""
    after, before = entry.after or {}, entry.before or {}
    if entry.action == CurationEntry.MERGE:
        return [after.get("survivor"), *after.get("folded", [])]
    if entry.action == CurationEntry.SPLIT:
        return [before.get("survivor"), *before.get("folded", [])]
    if entry.action == CurationEntry.MOVE:
        return [before.get("researcher"), after.get("researcher")]
    if entry.action == CurationEntry.DISTINCT:
        return list(after.get("pair", []))
    if entry.action in (CurationEntry.CONFIRM, CurationEntry.UNLINK, CurationEntry.NOT_PERSON):
        return [before.get("researcher")]
    if entry.action in OWNER_ACTIONS:
        return [entry.researcher_id, *after.get("others", [])]
    return []


OWNER_ACTIONS = (
    CurationEntry.VERIFIED,
    CurationEntry.OWNER_REMOVED,
    CurationEntry.OWNER_ATTACHED,
    CurationEntry.OWNER_PROPOSED,
    CurationEntry.OWNER_EDITED,
    CurationEntry.OWNER_UNDONE,
)


def _names(ids: list, names: dict[int, Researcher]) -> list[Researcher]:
    return [names[i] for i in ids if i in names]


def _history_item(entry: CurationEntry, names: dict[int, Researcher]) -> HistoryItem:
    after, before = entry.after or {}, entry.before or {}
    if entry.action == CurationEntry.MERGE:
        folded = after.get("folded", [])
        moved = sum(len(v) for v in after.get("authorships", {}).values())
        text = (
            f"{len(folded)} record{'s' if len(folded) != 1 else ''} folded into one, "
            f"with {moved} paper{'s' if moved != 1 else ''}; their old addresses lead here."
        )
        records = _names([after.get("survivor"), *folded], names)
    elif entry.action == CurationEntry.SPLIT:
        restored = sum(after.get("restored", {}).values())
        text = (
            f"An earlier merge was undone: {restored} paper{'s' if restored != 1 else ''} "
            "went back to their records."
        )
        records = _names([before.get("survivor"), *before.get("folded", [])], names)
    elif entry.action == CurationEntry.MOVE:
        name = before.get("name") or "an author"
        text = f"One paper's byline name ({name}) was moved from one record to another."
        records = _names([before.get("researcher"), after.get("researcher")], names)
    elif entry.action == CurationEntry.CONFIRM:
        name = before.get("name") or "an author"
        text = f"An uncertain link of one paper's byline name ({name}) was checked and confirmed."
        records = _names([before.get("researcher")], names)
    elif entry.action == CurationEntry.UNLINK:
        name = before.get("name") or "an author"
        text = f"One paper's byline name ({name}) was found to be someone else and taken off."
        records = _names([before.get("researcher")], names)
    elif entry.action == CurationEntry.NOT_PERSON:
        text = (
            "This record was found to name no person (a piece of an address or a note a "
            "source read as an author) and was taken off its papers."
            if after.get("is_person") is False
            else "An earlier finding that this record names no person was undone."
        )
        records = _names([before.get("researcher")], names)
    elif entry.action in OWNER_ACTIONS:
        text = _owner_text(entry)
        records = _names([entry.researcher_id, *after.get("others", [])], names)
    elif entry.action == CurationEntry.BYLINE:
        arxiv_id = before.get("arxiv_id") or "a paper"
        text = (
            f"The byline of {arxiv_id} was read again: entries that name no one "
            "(affiliations, places, notes) were taken out of its authors."
        )
        records = []
    else:
        text = "Two same-name records were marked as different people."
        records = _names(after.get("pair", []), names)
    return HistoryItem(
        action=entry.action,
        label=entry.get_action_display(),
        at=entry.created_at,
        text=text,
        records=records,
        undone=bool(entry.undone_by_id),
        reason=_public_reason(entry),
    )


def _public_reason(entry: CurationEntry) -> str:
    """The reason a reader may read: the researcher's own, or the identity rule's evidence for
    a merge it made (a curator's own note stays in the staff's history)."""
    if entry.action in OWNER_ACTIONS:
        return str((entry.after or {}).get("reason", ""))
    if (
        entry.action == CurationEntry.MERGE
        and entry.actor_id is None
        and entry.note.startswith(RULE_NOTE_PREFIX)
    ):
        return entry.note.removeprefix(RULE_NOTE_PREFIX)
    return ""


VERIFIED_TEXT = {
    Researcher.VERIFIED_ORCID: "The researcher signed in with the ORCID iD the sources give "
    "this record: verified by ORCID as their own page.",
    Researcher.VERIFIED_CURATORS: "The curators checked the researcher's claim and verified "
    "this page as their own.",
}


def _owner_text(entry: CurationEntry) -> str:
    after, before = entry.after or {}, entry.before or {}
    if entry.action == CurationEntry.VERIFIED:
        method = after.get("verified_by", "")
        return VERIFIED_TEXT.get(method, "The page's verification was withdrawn by the curators.")
    if entry.action == CurationEntry.OWNER_REMOVED:
        return (
            f"The researcher said {before.get('arxiv_id', 'a paper')} is not theirs: it left "
            "this page (the paper's byline is unchanged)."
        )
    if entry.action == CurationEntry.OWNER_ATTACHED:
        return (
            f"The researcher said {before.get('arxiv_id', 'a paper')} is theirs too: it came "
            "here from a same-name record."
        )
    if entry.action == CurationEntry.OWNER_PROPOSED:
        return (
            "The researcher proposed merging same-name records into this one; the curators decide."
        )
    if entry.action == CurationEntry.OWNER_EDITED:
        field = after.get("field", "")
        label = OWNER_FIELD_LABELS.get(field, field)
        old, new = before.get("shown", ""), after.get("shown", "")
        if field == "hidden":
            return (
                "The researcher hid this page from the researcher lists and search."
                if after.get("value")
                else "The researcher listed this page again."
            )
        return f"The researcher changed the {label}: {old or '(none)'} → {new or '(none)'}."
    undone = after.get("undoes_text", "")
    return f"The curators undid a change by the researcher{': ' + undone if undone else ''}."


OWNER_FIELD_LABELS = {
    "display_name": "name shown",
    "current_institution": "current affiliation",
    "homepage": "homepage",
    "hidden": "listing",
}
