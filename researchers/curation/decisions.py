"""Curation of researcher identities: merge, split (undo a merge), move one authorship, and
"not the same person". Every action is one transaction and writes one CurationEntry.

Locking: each service takes `select_for_update` on every researcher row involved, in pk order, so
two curators acting on overlapping records queue up instead of deadlocking, and the second one
re-validates against what the first committed (a record folded by the first is no longer live).

Other apps take part in merges through `merge_participant_register` (accounts moves follows and
claims): researchers never imports them. What each participant moved is stored in the merge's
audit entry, which is what a split restores from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from papers.models import Authorship
from papers.services import (
    authorship_confirm_match,
    authorship_unlink_researcher,
    authorships_link_researcher,
    papers_touch,
)
from wovepaper.lib.batches import chunked
from wovepaper.lib.queueing import send_after_commit

from ..models import (
    CurationEntry,
    DistinctPair,
    IdentityConflict,
    PaperMatchState,
    PinnedAuthorship,
    Researcher,
    ResearcherExternalId,
)
from ..page_figures import researchers_update_stats
from .reports import reports_close_for_entry

# A merge folds a handful of records; more at once is a mistake in the form, not a real cluster.
MAX_FOLDED = 20
CHUNK = 1000


class CurationError(ValueError):
    """An action that cannot be done as asked; the message is shown to the curator."""


@dataclass(frozen=True)
class MergeParticipant:
    """Another app's rows that follow a researcher through merges (follows, claims).

    `preview(survivor_id, folded_ids)` counts what would move; `merge(...)` moves it and returns
    JSON-ready data saying exactly what it did; `split(survivor_id, data)` puts back what that
    data says moved. All run inside the curation transaction.
    """

    name: str
    preview: Callable[..., dict]
    merge: Callable[..., dict]
    split: Callable[..., None]


_participants: dict[str, MergeParticipant] = {}


def merge_participant_register(participant: MergeParticipant) -> None:
    """Register (or replace, for reloads) a participant; called from an AppConfig.ready()."""
    _participants[participant.name] = participant


def merge_participants() -> list[MergeParticipant]:
    return [_participants[name] for name in sorted(_participants)]


def _lock(ids: Iterable[int]) -> dict[int, Researcher]:
    rows = list(Researcher.objects.select_for_update().filter(pk__in=set(ids)).order_by("pk"))
    return {r.pk: r for r in rows}


def _actor(user: User | None):
    return user if user is not None and getattr(user, "is_authenticated", False) else None


def _distinct_pairs(ids: Iterable[int]) -> set[tuple[int, int]]:
    ids = list(ids)
    return set(
        DistinctPair.objects.filter(low_id__in=ids, high_id__in=ids).values_list(
            "low_id", "high_id"
        )
    )


@dataclass
class MergePlan:
    """What a merge would do: read-only, shown as the preview and re-made under lock."""

    survivor: Researcher
    folded: list[Researcher]
    authorships: dict[int, list[int]] = field(default_factory=dict)  # folded id → authorship ids
    external_ids: dict[int, list[tuple[int, str, str]]] = field(default_factory=dict)
    participants: dict[str, dict] = field(default_factory=dict)
    # Records merged into a folded record earlier: re-pointed at the survivor (chains stay 1 hop).
    repointed: list[tuple[int, int]] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # warnings the curator should read
    blockers: list[str] = field(default_factory=list)  # reasons the merge cannot be done

    @property
    def authorship_count(self) -> int:
        return sum(len(v) for v in self.authorships.values())

    @property
    def external_id_count(self) -> int:
        return sum(len(v) for v in self.external_ids.values())

    def folded_rows(self) -> list[dict]:
        """Per folded record, what moves: for the preview table."""
        return [
            {
                "record": r,
                "authorships": len(self.authorships.get(r.pk, [])),
                "external_ids": [f"{s}:{v}" for _, s, v in self.external_ids.get(r.pk, [])],
            }
            for r in self.folded
        ]


# The preview lists every reason a merge is refused or conflicts, in the order curators read
# them; each check is a line, and split apart they would share all the records read here.
def merge_plan(  # noqa: C901
    *, survivor_id: int, folded_ids: Iterable[int], records: dict[int, Researcher] | None = None
) -> MergePlan:
    """The preview of a merge: what moves, what conflicts, what forbids it. Queries are fixed
    in number (each one reads only the records involved)."""
    folded_ids = sorted(set(folded_ids) - {survivor_id})
    if records is None:
        records = {r.pk: r for r in Researcher.objects.filter(pk__in=[survivor_id, *folded_ids])}
    survivor = records.get(survivor_id)
    if survivor is None:
        raise CurationError(f"Researcher {survivor_id} does not exist.")
    missing = [pk for pk in folded_ids if pk not in records]
    if missing:
        raise CurationError(f"Researcher {', '.join(map(str, missing))} does not exist.")
    plan = MergePlan(survivor=survivor, folded=[records[pk] for pk in folded_ids])
    if not folded_ids:
        plan.blockers.append("Pick at least one record to fold into the survivor.")
        return plan
    if len(folded_ids) > MAX_FOLDED:
        plan.blockers.append(f"At most {MAX_FOLDED} records can be folded in one merge.")
        return plan
    for record in [survivor, *plan.folded]:
        if record.merged_into_id:
            plan.blockers.append(
                f"{record} was already merged into researcher {record.merged_into_id}."
            )
    for low, high in sorted(_distinct_pairs([survivor_id, *folded_ids])):
        plan.blockers.append(f"Researchers {low} and {high} were marked as not the same person.")
    verified = [record.pk for record in [survivor, *plan.folded] if record.verified_by]
    if len(verified) > 1:
        # One person, one verified record: two owners' pages are two people until the curators
        # withdraw one verification (a person cannot hold two: their second claim is refused).
        plan.blockers.append(
            f"Researchers {', '.join(map(str, verified))} are each verified by their owner; "
            "withdraw all but one verification before merging them."
        )

    for pk, rid in (
        Authorship.objects.filter(researcher_id__in=folded_ids)
        .order_by("pk")
        .values_list("pk", "researcher_id")
    ):
        plan.authorships.setdefault(rid, []).append(pk)
    orcids: dict[str, set[int]] = {}
    for pk, rid, source, value in (
        ResearcherExternalId.objects.filter(researcher_id__in=[survivor_id, *folded_ids])
        .order_by("pk")
        .values_list("pk", "researcher_id", "source", "value")
    ):
        if rid != survivor_id:
            plan.external_ids.setdefault(rid, []).append((pk, source, value))
        if source == ResearcherExternalId.ORCID:
            orcids.setdefault(value, set()).add(rid)
    if len(orcids) > 1:
        plan.conflicts.append(
            "Different ORCIDs: "
            + "; ".join(
                f"{value} on {', '.join(map(str, sorted(rids)))}"
                for value, rids in sorted(orcids.items())
            )
            + ". The survivor would hold all of them."
        )
    shared = (
        Authorship.objects.filter(
            researcher_id=survivor_id, paper__authorships__researcher_id__in=folded_ids
        )
        .values_list("paper__arxiv_id", flat=True)
        .distinct()
        .order_by("paper__arxiv_id")
    )
    shared_ids = list(shared[:11])
    if shared_ids:
        plan.conflicts.append(
            "Both records are authors of the same paper (two byline "
            "positions): "
            + ", ".join(shared_ids[:10])
            + (" and more" if len(shared_ids) > 10 else "")
            + "."
        )
    plan.repointed = list(
        Researcher.objects.filter(merged_into_id__in=folded_ids)
        .order_by("pk")
        .values_list("pk", "merged_into_id")
    )
    for participant in merge_participants():
        plan.participants[participant.name] = participant.preview(
            survivor_id=survivor_id, folded_ids=folded_ids
        )
    return plan


def _record_snapshot(record: Researcher) -> dict:
    return {
        "id": record.pk,
        "display_name": record.display_name,
        "paper_count": record.paper_count,
        "merged_into": record.merged_into_id,
    }


@transaction.atomic
def researchers_merge(
    *, survivor_id: int, folded_ids: Iterable[int], actor: User | None, note: str = ""
) -> CurationEntry:
    """Fold records into a survivor, in one transaction.

    Authorships and external ids move to the survivor; participants (follows, claims) move theirs;
    the folded records stay, with `merged_into` = survivor (their pages and API ids lead there),
    and records earlier merged into them now point straight at the survivor; identity conflicts
    between the records are marked resolved; the figures of every record are recomputed.
    Raises CurationError (nothing changed) when the plan has blockers, e.g. when a concurrent
    merge already folded one of the records.
    """
    folded_ids = sorted(set(folded_ids) - {survivor_id})
    records = _lock([survivor_id, *folded_ids])
    plan = merge_plan(survivor_id=survivor_id, folded_ids=folded_ids, records=records)
    if plan.blockers:
        raise CurationError(" ".join(plan.blockers))
    ids = [survivor_id, *folded_ids]
    before = {
        "survivor": _record_snapshot(plan.survivor),
        "folded": [_record_snapshot(r) for r in plan.folded],
    }

    moved_authorships = {str(rid): pks for rid, pks in plan.authorships.items()}
    for chunk in chunked([pk for pks in plan.authorships.values() for pk in pks], CHUNK):
        authorships_link_researcher(authorship_ids=chunk, researcher_id=survivor_id)
    moved_ids = {str(rid): [pk for pk, _, _ in rows] for rid, rows in plan.external_ids.items()}
    ResearcherExternalId.objects.filter(
        pk__in=[pk for rows in plan.external_ids.values() for pk, _, _ in rows]
    ).update(researcher_id=survivor_id, origin=ResearcherExternalId.CURATION)
    if plan.repointed:
        Researcher.objects.filter(pk__in=[pk for pk, _ in plan.repointed]).update(
            merged_into_id=survivor_id
        )
    Researcher.objects.filter(pk__in=folded_ids).update(merged_into_id=survivor_id)
    conflicts = list(
        IdentityConflict.objects.filter(
            researcher_id__in=ids,
            other_researcher_id__in=ids,
            status=IdentityConflict.OPEN,
        ).values_list("pk", flat=True)
    )
    IdentityConflict.objects.filter(pk__in=conflicts).update(status=IdentityConflict.RESOLVED)
    participants = {}
    for participant in merge_participants():
        participants[participant.name] = participant.merge(
            survivor_id=survivor_id, folded_ids=folded_ids
        )
    researchers_update_stats(ids)
    send_after_commit("researchers.refresh_institutions", ids)

    entry = CurationEntry.objects.create(
        action=CurationEntry.MERGE,
        actor=_actor(actor),
        researcher_id=survivor_id,
        note=note[:2000],
        before=before,
        after={
            "survivor": survivor_id,
            "folded": folded_ids,
            "authorships": moved_authorships,
            "external_ids": moved_ids,
            "repointed": [[pk, target] for pk, target in plan.repointed],
            "conflicts_resolved": conflicts,
            "participants": participants,
            "warnings": plan.conflicts,
        },
    )
    entry.researchers.set(ids + [pk for pk, _ in plan.repointed])
    reports_close_for_entry(entry)
    return entry


# One check per reason a split is refused, each a line with its own message.
def merge_split_blockers(  # noqa: C901
    entry: CurationEntry, *, records: dict[int, Researcher] | None = None
) -> list[str]:
    """Why this merge cannot be undone now (empty when it can). A fixed number of queries."""
    if entry.action != CurationEntry.MERGE:
        return ["Only a merge can be split."]
    if entry.undone_by_id:
        return [f"This merge was already split (entry #{entry.undone_by_id})."]
    after = entry.after
    survivor_id, folded_ids = after["survivor"], after["folded"]
    ids = [survivor_id, *folded_ids]
    if records is None:
        records = {r.pk: r for r in Researcher.objects.filter(pk__in=ids)}
    blockers = []
    later = (
        CurationEntry.objects.filter(
            action=CurationEntry.MERGE, undone_by__isnull=True, pk__gt=entry.pk, researchers__in=ids
        )
        .distinct()
        .order_by("pk")
        .values_list("pk", "researcher_id")
    )
    for pk, target in later:
        blockers.append(
            f"Merge #{pk} (into researcher {target}) came later and involves these "
            f"records: split it first."
        )
    survivor = records.get(survivor_id)
    if survivor is None:
        return blockers + [f"The survivor {survivor_id} no longer exists."]
    if survivor.merged_into_id:
        blockers.append(f"The survivor was merged into researcher {survivor.merged_into_id} since.")
    for pk in folded_ids:
        record = records.get(pk)
        if record is None:
            blockers.append(f"Folded record {pk} no longer exists.")
        elif record.merged_into_id != survivor_id:
            blockers.append(f"Folded record {pk} no longer points at the survivor.")
    moved = [pk for pks in after["authorships"].values() for pk in pks]
    still = 0
    for chunk in chunked(moved, CHUNK):
        still += Authorship.objects.filter(pk__in=chunk, researcher_id=survivor_id).count()
    if still != len(moved):
        away = list(
            Authorship.objects.filter(pk__in=moved[: CHUNK * 5])
            .exclude(researcher_id=survivor_id)
            .order_by("pk")
            .values_list("paper__arxiv_id", "position")[:10]
        )
        blockers.append(
            f"{len(moved) - still} of the {len(moved)} authorships it moved have "
            "moved since ("
            + ", ".join(f"{a} #{p}" for a, p in away)
            + "): move them back to the survivor first."
        )
    moved_ids = [pk for pks in after["external_ids"].values() for pk in pks]
    if ResearcherExternalId.objects.filter(
        pk__in=moved_ids, researcher_id=survivor_id
    ).count() != len(moved_ids):
        blockers.append("Some external ids it moved are no longer on the survivor.")
    return blockers


@transaction.atomic
def merge_split(*, entry_id: int, actor: User | None, note: str = "") -> CurationEntry:
    """Undo a merge from its audit entry: each folded record gets back the authorships, external
    ids, follows and claims it had, and is live again; records that had been merged into it point
    at it again. Papers matched onto the survivor since the merge are queued for matching again
    (a folded record's id may have brought them). Raises CurationError (nothing changed) with
    what blocks it, e.g. a later merge involving the survivor, or authorships moved since."""
    entry = CurationEntry.objects.select_for_update().filter(pk=entry_id).first()
    if entry is None:
        raise CurationError(f"Curation entry {entry_id} does not exist.")
    if entry.action != CurationEntry.MERGE:
        raise CurationError("Only a merge can be split.")
    after = entry.after
    survivor_id, folded_ids = after["survivor"], after["folded"]
    repointed = [(pk, target) for pk, target in after.get("repointed", [])]
    records = _lock([survivor_id, *folded_ids, *(pk for pk, _ in repointed)])
    blockers = merge_split_blockers(entry, records=records)
    if blockers:
        raise CurationError(" ".join(blockers))

    for rid, pks in after["authorships"].items():
        for chunk in chunked(pks, CHUNK):
            authorships_link_researcher(authorship_ids=chunk, researcher_id=int(rid))
    for rid, pks in after["external_ids"].items():
        ResearcherExternalId.objects.filter(pk__in=pks).update(
            researcher_id=int(rid), origin=ResearcherExternalId.MATCHING
        )
    Researcher.objects.filter(pk__in=folded_ids).update(merged_into=None)
    # One update per folded record, however many records had been merged into it.
    back_to: dict[int, list[int]] = {}
    for pk, target in repointed:
        back_to.setdefault(target, []).append(pk)
    for target, pks in back_to.items():
        Researcher.objects.filter(pk__in=pks, merged_into_id=survivor_id).update(
            merged_into_id=target
        )
    IdentityConflict.objects.filter(
        pk__in=after.get("conflicts_resolved", []), status=IdentityConflict.RESOLVED
    ).update(status=IdentityConflict.OPEN)
    for participant in reversed(merge_participants()):
        data = after.get("participants", {}).get(participant.name)
        if data is not None:
            participant.split(survivor_id=survivor_id, data=data)
    ids = [survivor_id, *folded_ids]
    researchers_update_stats(ids)
    send_after_commit("researchers.refresh_institutions", ids)
    # Papers matched onto the survivor after the merge may have come through a folded record's
    # id, which is back on that record now: match them again and the ids decide.
    # (The authorships the merge moved are back on their records by now, so not counted here.)
    requeued_count = PaperMatchState.objects.filter(
        paper__authorships__researcher_id=survivor_id,
        last_attempt_at__gte=entry.created_at,
    ).update(next_attempt_at=timezone.now())

    split = CurationEntry.objects.create(
        action=CurationEntry.SPLIT,
        actor=_actor(actor),
        researcher_id=survivor_id,
        note=note[:2000],
        before={"merge": entry.pk, "survivor": survivor_id, "folded": folded_ids},
        after={
            "restored": {rid: len(pks) for rid, pks in after["authorships"].items()},
            "papers_to_match_again": requeued_count,
            "external_ids": after["external_ids"],
            "repointed": after.get("repointed", []),
        },
    )
    split.researchers.set(ids + [pk for pk, _ in repointed])
    entry.undone_by = split
    entry.save(update_fields=["undone_by"])
    reports_close_for_entry(split)
    return split


@transaction.atomic
def authorship_move(
    *, authorship_id: int, to_researcher_id: int, actor: User | None, note: str = ""
) -> CurationEntry:
    """Attribute one authorship to another record (one wrongly attributed paper), and pin it so
    that matching leaves it there. Both records' figures are recomputed."""
    authorship = Authorship.objects.select_related("paper").filter(pk=authorship_id).first()
    if authorship is None:
        raise CurationError(f"Authorship {authorship_id} does not exist.")
    from_id = authorship.researcher_id
    involved = [pk for pk in (from_id, to_researcher_id) if pk]
    records = _lock(involved)
    target = records.get(to_researcher_id)
    if target is None:
        raise CurationError(f"Researcher {to_researcher_id} does not exist.")
    if target.merged_into_id:
        raise CurationError(
            f"Researcher {target.pk} was merged into {target.merged_into_id}: "
            "move the authorship to the survivor."
        )
    # Re-read under the lock: a concurrent move may have got there first.
    authorship = Authorship.objects.select_for_update().get(pk=authorship_id)
    if authorship.researcher_id != from_id:
        raise CurationError("This authorship was moved by someone else meanwhile; reload.")
    if from_id == to_researcher_id:
        raise CurationError("The authorship is already on that record.")
    authorships_link_researcher(authorship_ids=[authorship_id], researcher_id=to_researcher_id)
    entry = CurationEntry.objects.create(
        action=CurationEntry.MOVE,
        actor=_actor(actor),
        researcher_id=to_researcher_id,
        note=note[:2000],
        before={
            "authorship": authorship_id,
            "paper": authorship.paper_id,
            "position": authorship.position,
            "name": authorship.name,
            "researcher": from_id,
        },
        after={"authorship": authorship_id, "researcher": to_researcher_id},
    )
    entry.researchers.set(involved)
    PinnedAuthorship.objects.update_or_create(
        authorship_id=authorship_id, defaults={"entry": entry}
    )
    reports_close_for_entry(entry)
    researchers_update_stats(involved)
    send_after_commit("researchers.refresh_institutions", involved)
    return entry


def _uncertain_link_locked(authorship_id: int) -> tuple[Authorship, Researcher]:
    """The uncertain link under lock (its researcher row first, then the authorship), checked
    to still be what the curator saw: linked, uncertain and not pinned by someone else."""
    authorship = Authorship.objects.filter(pk=authorship_id).first()
    if authorship is None:
        raise CurationError(f"Authorship {authorship_id} does not exist.")
    if authorship.researcher_id is None:
        raise CurationError("This byline name is linked to no record any more; reload.")
    records = _lock([authorship.researcher_id])
    authorship = Authorship.objects.select_for_update().get(pk=authorship_id)
    researcher = records.get(authorship.researcher_id or 0)
    if researcher is None:
        raise CurationError("This link changed meanwhile; reload.")
    if PinnedAuthorship.objects.filter(authorship_id=authorship_id).exists():
        raise CurationError("A curator has decided this link already; reload.")
    if not authorship.match_uncertain:
        raise CurationError("This link is not an uncertain one; reload.")
    return authorship, researcher


def _link_before(authorship: Authorship) -> dict:
    return {
        "authorship": authorship.pk,
        "paper": authorship.paper_id,
        "position": authorship.position,
        "name": authorship.name,
        "researcher": authorship.researcher_id,
        "method": authorship.match_method,
        "confidence": authorship.match_confidence,
    }


def _link_decided(
    authorship: Authorship,
    researcher: Researcher,
    *,
    action: str,
    actor: User | None,
    note: str,
    after: dict,
) -> CurationEntry:
    """The audit entry of a curator's decision on an uncertain link, the byline name pinned so
    that matching keeps it, and the paper's page told it changed."""
    entry = CurationEntry.objects.create(
        action=action,
        actor=_actor(actor),
        researcher=researcher,
        note=note[:2000],
        before=_link_before(authorship),
        after={"authorship": authorship.pk, **after},
    )
    entry.researchers.set([researcher.pk])
    PinnedAuthorship.objects.update_or_create(
        authorship_id=authorship.pk, defaults={"entry": entry}
    )
    papers_touch(paper_ids=[authorship.paper_id])
    return entry


@transaction.atomic
def authorship_confirm(*, authorship_id: int, actor: User | None, note: str = "") -> CurationEntry:
    """A curator checked an uncertain link and it is right: it becomes certain ("a curator's
    check"), pinned so that matching leaves it; the entry keeps how matching had made it."""
    authorship, researcher = _uncertain_link_locked(authorship_id)
    authorship_confirm_match(authorship_id=authorship.pk)
    return _link_decided(
        authorship,
        researcher,
        action=CurationEntry.CONFIRM,
        actor=actor,
        note=note,
        after={"method": Authorship.MatchMethod.CURATOR, "confidence": 1.0},
    )


@transaction.atomic
def authorship_unlink(*, authorship_id: int, actor: User | None, note: str = "") -> CurationEntry:
    """A curator checked an uncertain link and the byline name is someone else: the paper
    leaves the record, and the name stays unlinked (pinned) until a curator moves it; the
    record's figures are recomputed."""
    authorship, researcher = _uncertain_link_locked(authorship_id)
    authorship_unlink_researcher(authorship_id=authorship.pk)
    entry = _link_decided(
        authorship,
        researcher,
        action=CurationEntry.UNLINK,
        actor=actor,
        note=note,
        after={"researcher": None},
    )
    reports_close_for_entry(entry)
    researchers_update_stats([researcher.pk])
    send_after_commit("researchers.refresh_institutions", [researcher.pk])
    return entry


@transaction.atomic
def researchers_mark_distinct(
    *, first_id: int, second_id: int, actor: User | None, note: str = ""
) -> CurationEntry | None:
    """Record that two records are different people: the queue stops suggesting the pair and no
    merge joins them. Idempotent: returns None when the pair was already marked."""
    low, high = sorted((first_id, second_id))
    if low == high:
        raise CurationError("A record is always the same person as itself.")
    records = _lock([low, high])
    if len(records) != 2:
        raise CurationError("Both researchers must exist.")
    if DistinctPair.objects.filter(low_id=low, high_id=high).exists():
        return None
    entry = CurationEntry.objects.create(
        action=CurationEntry.DISTINCT,
        actor=_actor(actor),
        researcher_id=low,
        note=note[:2000],
        before={},
        after={"pair": [low, high]},
    )
    entry.researchers.set([low, high])
    DistinctPair.objects.create(low_id=low, high_id=high, entry=entry)
    IdentityConflict.objects.filter(
        Q(researcher_id=low, other_researcher_id=high)
        | Q(researcher_id=high, other_researcher_id=low),
        status=IdentityConflict.OPEN,
    ).update(status=IdentityConflict.DISMISSED)
    reports_close_for_entry(entry)
    return entry
