"""The changes a verified researcher makes to their own page (papers that are not theirs, papers of
a same-name record that are, same-name records to merge, the name, affiliation, homepage and
listing the page shows), and the curators' undoing of them. Accounts decides who the owner is
(accounts.ownership) and calls these writes; researchers never read accounts.

Every change writes one CurationEntry, which is the page's public history (what, when and
why; never which member of staff) and what the curators undo. The sources' own records
(ResearcherExternalId) are never edited here.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils.dateparse import parse_datetime

from institutions.models import Institution
from papers.models import Authorship
from papers.services import (
    authorship_unlink_researcher,
    authorships_link_researcher,
    authorships_save_match_links,
    papers_touch,
)
from wovepaper.lib.pagecache import pages_changed
from wovepaper.lib.queueing import send_after_commit

from .curation.reports import match_report_create
from .models import (
    CurationEntry,
    DistinctPair,
    MatchReport,
    PinnedAuthorship,
    Researcher,
)
from .page_figures import researchers_update_stats


class OwnershipError(ValueError):
    """A change the owner cannot make as asked; the message is shown to them."""


OWNER_FIELDS = ("display_name", "current_institution", "homepage", "hidden")
UNDOABLE = (CurationEntry.OWNER_REMOVED, CurationEntry.OWNER_ATTACHED, CurationEntry.OWNER_EDITED)
REASON_MAX = 500


def _reason(reason: str) -> str:
    reason = " ".join((reason or "").split())
    if not reason:
        raise OwnershipError("Say why: the reason is shown in the page's public history.")
    return reason[:REASON_MAX]


def _owned(researcher_id: int) -> Researcher:
    record = Researcher.objects.select_for_update().filter(pk=researcher_id).first()
    if record is None or record.merged_into_id or not record.is_person:
        raise OwnershipError("This record is not a live researcher page any more.")
    return record


def _byline(authorship: Authorship) -> dict:
    return {
        "authorship": authorship.pk,
        "paper": authorship.paper_id,
        "arxiv_id": authorship.paper.arxiv_id,
        "position": authorship.position,
        "name": authorship.name,
        "researcher": authorship.researcher_id,
        "method": authorship.match_method,
        "confidence": authorship.match_confidence,
        "matched_at": authorship.matched_at.isoformat() if authorship.matched_at else None,
    }


def _paper_changed(paper_id: int) -> None:
    papers_touch(paper_ids=[paper_id])


@transaction.atomic
def owner_paper_remove(*, researcher_id: int, authorship_id: int, reason: str) -> CurationEntry:
    """The owner says a paper on their page is not theirs: the byline name leaves the record at
    once and stays unlinked (pinned, so matching does not bring it back) until a curator decides
    otherwise; the paper's byline is unchanged. Raises OwnershipError (nothing changed) for an
    authorship that is not on this record."""
    reason = _reason(reason)
    record = _owned(researcher_id)
    authorship = (
        Authorship.objects.select_for_update().select_related("paper").filter(pk=authorship_id)
    ).first()
    if authorship is None or authorship.researcher_id != record.pk:
        raise OwnershipError("That paper is not on your page (any more); reload.")
    before = _byline(authorship)
    authorship_unlink_researcher(authorship_id=authorship.pk)
    entry = CurationEntry.objects.create(
        action=CurationEntry.OWNER_REMOVED,
        researcher=record,
        before=before,
        after={"authorship": authorship.pk, "researcher": None, "reason": reason},
    )
    entry.researchers.set([record.pk])
    PinnedAuthorship.objects.update_or_create(
        authorship_id=authorship.pk, defaults={"entry": entry}
    )
    researchers_update_stats([record.pk])
    send_after_commit("researchers.refresh_institutions", [record.pk])
    _paper_changed(authorship.paper_id)
    return entry


@transaction.atomic
def owner_paper_attach(*, researcher_id: int, authorship_id: int, reason: str) -> CurationEntry:
    """The owner says a paper on a same-name record is theirs too: that byline name moves to
    their record, pinned there. Only from a live record of the same name, never over a
    curator's decision, and not onto a paper the record already holds."""
    reason = _reason(reason)
    authorship = Authorship.objects.select_related("paper").filter(pk=authorship_id).first()
    if authorship is None or authorship.researcher_id is None:
        raise OwnershipError("That paper is not on a same-name record (any more); reload.")
    from_id = authorship.researcher_id
    locked = {
        r.pk: r
        for r in Researcher.objects.select_for_update()
        .filter(pk__in={researcher_id, from_id})
        .order_by("pk")
    }
    record, source = _owned(researcher_id), locked.get(from_id)
    authorship = (
        Authorship.objects.select_for_update().select_related("paper").get(pk=authorship_id)
    )
    if (
        source is None
        or authorship.researcher_id != from_id
        or source.pk == record.pk
        or source.merged_into_id
        or source.name_key != record.name_key
    ):
        raise OwnershipError("Only a paper of a same-name record can be added; reload.")
    pin = (
        PinnedAuthorship.objects.filter(authorship_id=authorship.pk).select_related("entry").first()
    )
    if pin is not None:
        raise OwnershipError(
            "A curator or the other record's owner has decided who wrote this byline: report it "
            "to the curators instead."
        )
    if Authorship.objects.filter(paper_id=authorship.paper_id, researcher_id=record.pk).exists():
        raise OwnershipError("Your page already lists that paper.")
    before = _byline(authorship)
    authorships_link_researcher(authorship_ids=[authorship.pk], researcher_id=record.pk)
    entry = CurationEntry.objects.create(
        action=CurationEntry.OWNER_ATTACHED,
        researcher=record,
        before=before,
        after={
            "authorship": authorship.pk,
            "researcher": record.pk,
            "others": [source.pk],
            "reason": reason,
        },
    )
    entry.researchers.set([record.pk, source.pk])
    PinnedAuthorship.objects.create(authorship_id=authorship.pk, entry=entry)
    researchers_update_stats([record.pk, source.pk])
    send_after_commit("researchers.refresh_institutions", [record.pk, source.pk])
    _paper_changed(authorship.paper_id)
    return entry


@transaction.atomic
def owner_merge_propose(
    *, researcher_id: int, other_ids: list[int], reason: str, user: User
) -> CurationEntry:
    """The owner proposes merging same-name records into theirs. Nothing merges: the curators
    decide, from a report per record in their queue (a merge answers it), and the evidence
    panel counts the proposal for the pair."""
    reason = _reason(reason)
    record = _owned(researcher_id)
    others = list(
        Researcher.objects.filter(
            pk__in=set(other_ids) - {record.pk},
            name_key=record.name_key,
            merged_into__isnull=True,
            is_person=True,
        ).order_by("pk")
    )
    if not others:
        raise OwnershipError("Choose at least one live record of the same name.")
    distinct = DistinctPair.objects.filter(
        Q(low_id=record.pk, high_id__in=[o.pk for o in others])
        | Q(high_id=record.pk, low_id__in=[o.pk for o in others])
    ).exists()
    if distinct:
        raise OwnershipError(
            "The curators decided one of these records is another person: report it to them "
            "with what shows it is you."
        )
    entry = CurationEntry.objects.create(
        action=CurationEntry.OWNER_PROPOSED,
        researcher=record,
        before={"researcher": record.pk},
        after={"others": [o.pk for o in others], "reason": reason},
    )
    entry.researchers.set([record.pk, *(o.pk for o in others)])
    for other in others:
        match_report_create(
            user=user,
            kind=MatchReport.SAME_PERSON,
            researcher_id=record.pk,
            other_researcher_id=other.pk,
            note=f"Proposed by the verified owner of #{record.pk}: {reason}",
        )
    return entry


def _shown(field: str, value) -> str:
    if field == "current_institution":
        institution = Institution.objects.filter(pk=value).first() if value else None
        return institution.name if institution else ""
    if field == "hidden":
        return "hidden" if value else "listed"
    return str(value or "")


def _field_value(record: Researcher, field: str):
    return (
        record.current_institution_id if field == "current_institution" else getattr(record, field)
    )


def _validated(field: str, value):
    if field == "display_name":
        value = " ".join(str(value or "").split())
        if not value:
            raise OwnershipError("A name cannot be empty.")
        return value[:255]
    if field == "homepage":
        value = str(value or "").strip()
        if value and urlsplit(value).scheme not in ("http", "https"):
            raise OwnershipError("A homepage is an http:// or https:// address.")
        return value[:500]
    if field == "current_institution":
        if value in (None, ""):
            return None
        if not Institution.objects.filter(pk=value).exists():
            raise OwnershipError("Choose an institution we hold (by its ROR id).")
        return int(value)
    if field == "hidden":
        return bool(value)
    raise OwnershipError(f"{field} is not something an owner can change.")


class OwnerFieldsRefused(OwnershipError):
    """Fields of an owner's edit that cannot be set as asked, `refused` = {field: why}; nothing
    was changed."""

    def __init__(self, refused: dict[str, str]):
        self.refused = refused
        super().__init__("; ".join(refused.values()))


@transaction.atomic
def owner_settings_set(*, researcher_id: int, changes: dict, reason: str) -> int:
    """Set several of the page's fields at once (`changes`: {field: value}, fields of
    `owner_edit`). Every field is checked first: one refused leaves them all as they were and
    raises OwnerFieldsRefused naming each refused field, so the owner can correct that one and
    send the rest again. Then one history entry per field changed; returns how many changed."""
    refused: dict[str, str] = {}
    for field, value in changes.items():
        try:
            if field not in OWNER_FIELDS:
                raise OwnershipError(f"{field} is not something an owner can change.")
            _validated(field, value)
        except OwnershipError as exc:
            refused[field] = str(exc)
    if refused:
        raise OwnerFieldsRefused(refused)
    return sum(
        1
        for field, value in changes.items()
        if owner_edit(researcher_id=researcher_id, field=field, value=value, reason=reason)
    )


@transaction.atomic
def owner_edit(*, researcher_id: int, field: str, value, reason: str) -> CurationEntry | None:
    """The owner sets the page's shown name, current affiliation (an institution we hold from
    ROR), homepage, or hides it from the lists and search. One history entry per field changed;
    None when the value is what it was. The name key (same-name grouping) and the bylines keep
    the printed name."""
    if field not in OWNER_FIELDS:
        raise OwnershipError(f"{field} is not something an owner can change.")
    reason = _reason(reason)
    record = _owned(researcher_id)
    value = _validated(field, value)
    old = _field_value(record, field)
    if old == value:
        return None
    setattr(record, "current_institution_id" if field == "current_institution" else field, value)
    record.save(update_fields=[field, "modified_at"])
    if field == "hidden":
        # A hidden record leaves its institutions' lists, and their counts, too.
        send_after_commit("researchers.refresh_institutions", [record.pk])
    entry = CurationEntry.objects.create(
        action=CurationEntry.OWNER_EDITED,
        researcher=record,
        before={"field": field, "value": old, "shown": _shown(field, old)},
        after={"field": field, "value": value, "shown": _shown(field, value), "reason": reason},
    )
    entry.researchers.set([record.pk])
    pages_changed("researcher", [record.pk])
    return entry


@transaction.atomic
def owner_change_undo(*, entry_id: int, actor: User | None, reason: str) -> CurationEntry:
    """The curators undo an owner's change: a removed paper goes back on the record, an added
    one back to the record it came from (each pinned by this decision), a field back to what it
    was. Raises OwnershipError (nothing changed) when the state has moved on since."""
    reason = _reason(reason)
    entry = CurationEntry.objects.select_for_update().filter(pk=entry_id).first()
    if entry is None or entry.action not in UNDOABLE:
        raise OwnershipError(
            "Only a paper removed or added, or a field changed, by a researcher can be undone here."
        )
    if entry.undone_by_id:
        raise OwnershipError("This change was undone already.")
    before, after = entry.before or {}, entry.after or {}
    involved = [entry.researcher_id, *after.get("others", [])]
    locked = {
        r.pk: r
        for r in Researcher.objects.select_for_update().filter(pk__in=involved).order_by("pk")
    }
    if entry.action == CurationEntry.OWNER_EDITED:
        record = locked.get(entry.researcher_id or 0)
        if record is None:
            raise OwnershipError("The record this change was made on no longer exists.")
        field = after["field"]
        if _field_value(record, field) != after["value"]:
            raise OwnershipError("The field has changed again since: undo the later change first.")
        setattr(
            record,
            "current_institution_id" if field == "current_institution" else field,
            before["value"],
        )
        record.save(update_fields=[field, "modified_at"])
        if field == "hidden":
            send_after_commit("researchers.refresh_institutions", [record.pk])
        what = f"{after['field']} back to {before.get('shown') or '(none)'}"
    else:
        authorship = Authorship.objects.select_for_update().filter(pk=after["authorship"]).first()
        if authorship is None or authorship.researcher_id != after["researcher"]:
            raise OwnershipError("That byline name has moved since; reload.")
        back_to = locked.get(before["researcher"])
        if back_to is None or back_to.merged_into_id:
            raise OwnershipError("The record it came from is not live any more.")
        authorship.researcher_id = back_to.pk
        authorship.match_method = before.get("method") or ""
        authorship.match_confidence = before.get("confidence")
        matched_at = before.get("matched_at")
        authorship.matched_at = parse_datetime(matched_at) if matched_at else None
        authorships_save_match_links(authorships=[authorship])
        researchers_update_stats(involved)
        send_after_commit("researchers.refresh_institutions", involved)
        _paper_changed(authorship.paper_id)
        what = f"{before.get('arxiv_id', 'a paper')} back on #{back_to.pk}"
    undo = CurationEntry.objects.create(
        action=CurationEntry.OWNER_UNDONE,
        actor=actor if actor is not None and actor.is_authenticated else None,
        researcher_id=entry.researcher_id,
        before={"undoes": entry.pk, "action": entry.action},
        after={
            "undoes": entry.pk,
            "undoes_text": f"{entry.get_action_display()} ({what})",
            "others": after.get("others", []),
            "reason": reason,
        },
    )
    undo.researchers.set(involved)
    if entry.action != CurationEntry.OWNER_EDITED:
        PinnedAuthorship.objects.update_or_create(
            authorship_id=after["authorship"], defaults={"entry": undo}
        )
    entry.undone_by = undo
    entry.save(update_fields=["undone_by"])
    pages_changed("researcher", involved)
    return undo
