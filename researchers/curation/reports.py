"""Readers' reports of wrong matches: filed by signed-in readers, closed by curators' decisions.

A report never changes a record by itself. It waits in the curators' queue (admin) with the
evidence for the records it names; the curation services (`researchers.curation.decisions`) call
`reports_close_for_entry` after each merge, split, move or "not the same person", which closes
the open reports that decision answers. A curator may also close one without a change, saying
why (`report_decline`). The reporter sees the outcome on their account page.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from papers.models import Authorship
from wovepaper.lib.bounds import made_in_the_last_hour

from ..models import CurationEntry, MatchReport, Researcher


class ReportError(ValueError):
    """A report that cannot be filed, with the sentence to show the reader."""


class ReportThrottled(ReportError):
    pass


def _live(researcher_id: int | None, label: str) -> Researcher:
    record = Researcher.objects.filter(pk=researcher_id).first() if researcher_id else None
    if record is None:
        raise ReportError(f"There is no {label} with that id.")
    if record.merged_into_id:
        raise ReportError(
            f"That {label} was merged into another record; report on the record it leads to."
        )
    return record


@transaction.atomic
def match_report_create(
    *,
    user: User,
    kind: str,
    researcher_id: int | None,
    other_researcher_id: int | None = None,
    authorship_id: int | None = None,
    note: str = "",
) -> MatchReport:
    """File a report for the curators. Raises ReportThrottled past MATCH_REPORTS_PER_HOUR for
    this user, ReportError for a report that names the wrong things. Filing the same open report
    twice returns the first one (idempotent)."""
    if not user.is_authenticated:
        raise ReportError("Sign in to report a wrong match.")
    if kind not in dict(MatchReport.KINDS):
        raise ReportError("Choose what is wrong.")
    with transaction.atomic():
        # Counting, finding the same open report and filing are one step per reporter: on
        # PostgreSQL the reporter's row is locked until this report is saved, so parallel
        # requests (20 at once took 11 against a limit of 10, and 8 identical ones stored 2)
        # wait and count the first. SQLite serialises writers the same way.
        list(User.objects.select_for_update().filter(pk=user.pk).values("pk"))
        return _report_file(
            user=user,
            kind=kind,
            researcher_id=researcher_id,
            other_researcher_id=other_researcher_id,
            authorship_id=authorship_id,
            note=note,
        )


def _report_file(
    *,
    user: User,
    kind: str,
    researcher_id: int | None,
    other_researcher_id: int | None,
    authorship_id: int | None,
    note: str,
) -> MatchReport:
    recent = made_in_the_last_hour(MatchReport.objects.filter(reporter=user))
    if recent >= settings.MATCH_REPORTS_PER_HOUR:
        raise ReportThrottled(
            f"You have sent {recent} reports in the last hour, the most we take from one "
            "account; please wait a little before sending more."
        )
    researcher = _live(researcher_id, "researcher")
    other = None
    authorship = None
    if kind == MatchReport.NOT_BY:
        authorship = (
            Authorship.objects.filter(pk=authorship_id, researcher_id=researcher.pk).first()
            if authorship_id
            else None
        )
        if authorship is None:
            raise ReportError("Choose the paper that is not by this person.")
    else:
        other = _live(other_researcher_id, "other researcher")
        if other.pk == researcher.pk:
            raise ReportError("Choose two different records.")
    existing = MatchReport.objects.filter(
        reporter=user,
        kind=kind,
        status=MatchReport.OPEN,
        researcher=researcher,
        other_researcher=other,
        authorship=authorship,
    ).first()
    if existing is not None:
        return existing
    return MatchReport.objects.create(
        reporter=user,
        kind=kind,
        researcher=researcher,
        other_researcher=other,
        authorship=authorship,
        note=note.strip()[:2000],
    )


def _answers(report: MatchReport, entry: CurationEntry, touched: set[int]) -> bool:
    """Whether this curator decision answers this report."""
    pair = {report.researcher_id, report.other_researcher_id}
    if entry.action == CurationEntry.MOVE:
        return report.kind == MatchReport.NOT_BY and (
            report.authorship_id == entry.after.get("authorship")
        )
    if entry.action == CurationEntry.UNLINK:
        return report.kind == MatchReport.NOT_BY and (
            report.authorship_id == entry.before.get("authorship")
        )
    if entry.action == CurationEntry.MERGE:
        return report.kind == MatchReport.SAME_PERSON and pair <= touched
    if entry.action == CurationEntry.DISTINCT:
        return report.kind == MatchReport.DIFFERENT_PEOPLE and pair == set(entry.after["pair"])
    if entry.action == CurationEntry.SPLIT:
        if report.kind == MatchReport.NOT_BY:
            return report.researcher_id in touched
        return report.kind == MatchReport.DIFFERENT_PEOPLE and pair <= touched
    return False


OUTCOMES = {
    CurationEntry.MERGE: "A curator merged these records.",
    CurationEntry.SPLIT: "A curator undid the merge of these records.",
    CurationEntry.MOVE: "A curator moved this paper to another record.",
    CurationEntry.DISTINCT: "A curator marked these records as different people.",
    CurationEntry.UNLINK: "A curator took this paper off the record.",
}


def reports_close_for_entry(entry: CurationEntry) -> int:
    """Close the open reports that this curation decision answers; returns how many."""
    touched = set(entry.researchers.values_list("pk", flat=True))
    if not touched:
        return 0
    candidates = MatchReport.objects.filter(
        Q(researcher_id__in=touched) | Q(other_researcher_id__in=touched),
        status=MatchReport.OPEN,
    )
    closing = [r.pk for r in candidates if _answers(r, entry, touched)]
    if not closing:
        return 0
    return MatchReport.objects.filter(pk__in=closing).update(
        status=MatchReport.ACTED,
        outcome=OUTCOMES[entry.action],
        closed_by=entry,
        closed_at=timezone.now(),
    )


def report_decline(*, report: MatchReport, reason: str) -> MatchReport:
    """A curator keeps the records as they are; the reporter sees why."""
    if not reason.strip():
        raise ReportError("Say why the records stay as they are: the reader will see it.")
    report.status = MatchReport.DECLINED
    report.outcome = reason.strip()[:2000]
    report.closed_at = timezone.now()
    report.save(update_fields=["status", "outcome", "closed_at"])
    return report


def reports_of_user(user: User, *, limit: int = 50) -> list[MatchReport]:
    """The reader's own reports, newest first, with what they name (one query)."""
    return list(
        MatchReport.objects.filter(reporter=user)
        .select_related("researcher", "other_researcher", "authorship__paper")
        .order_by("-created_at", "-pk")[:limit]
    )


def reports_open(*, limit: int = 50) -> list[MatchReport]:
    """Open reports for the curators' queue, oldest first (one query)."""
    return list(
        MatchReport.objects.filter(status=MatchReport.OPEN)
        .select_related("researcher", "other_researcher", "authorship__paper")
        .order_by("created_at", "pk")[:limit]
    )
