"""What a verified owner sees to correct their page: the record, if it is theirs, and a page of
its bylines, the same-name records with their newest bylines, and the institutions on its
bylines (the affiliations offered). Reads only; the corrections themselves are
researchers.owner_edits services, called from correction_views."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from institutions.models import AuthorshipInstitution, Institution
from papers.models import Authorship
from researchers.models import Researcher
from researchers.selectors import researcher_same_name

from ..models import Claim

OWNER_PAPERS_PAGE = 50
SAME_NAME_SHOWN = 8
SAME_NAME_PAPERS = 20
INSTITUTIONS_OFFERED = 50


def owned_researcher(*, user: User, researcher_id: int) -> Researcher | None:
    """The live record `researcher_id` when the user's claim on it is confirmed (one query)."""
    return (
        Researcher.objects.filter(
            pk=researcher_id,
            merged_into__isnull=True,
            is_person=True,
            claims__user=user,
            claims__status=Claim.Status.CONFIRMED,
        )
        .select_related("current_institution")
        .first()
    )


@dataclass
class SameNameRecord:
    record: Researcher
    bylines: list[Authorship]


@dataclass
class OwnerPage:
    bylines: list[Authorship]  # the record's own, newest paper first, one page
    has_more: bool
    same_name: list[SameNameRecord]
    institutions: list[Institution]  # on the record's bylines: the affiliations offered


def owner_page(researcher: Researcher, *, page: int = 1) -> OwnerPage:
    """What the owner corrects: a page of their bylines, the same-name records with their
    newest bylines, and the institutions on their bylines. 3 + SAME_NAME_SHOWN queries at most,
    whatever the record's size."""
    offset = (max(page, 1) - 1) * OWNER_PAPERS_PAGE
    bylines = list(
        Authorship.objects.filter(researcher_id=researcher.pk)
        .select_related("paper")
        .order_by("-paper__published", "-paper_id")[offset : offset + OWNER_PAPERS_PAGE + 1]
    )
    same_name = []
    for record in researcher_same_name(researcher, limit=SAME_NAME_SHOWN):
        same_name.append(
            SameNameRecord(
                record=record,
                bylines=list(
                    Authorship.objects.filter(researcher_id=record.pk)
                    .select_related("paper")
                    .order_by("-paper__published", "-paper_id")[:SAME_NAME_PAPERS]
                ),
            )
        )
    institutions = list(
        Institution.objects.filter(
            pk__in=AuthorshipInstitution.objects.filter(
                authorship__researcher_id=researcher.pk
            ).values("institution_id")
        ).order_by("name")[:INSTITUTIONS_OFFERED]
    )
    return OwnerPage(
        bylines=bylines[:OWNER_PAPERS_PAGE],
        has_more=len(bylines) > OWNER_PAPERS_PAGE,
        same_name=same_name,
        institutions=institutions,
    )
