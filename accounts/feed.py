"""What is new from the researchers and institutions a reader follows, for the feed page and the
digest: their papers, and the news of the papers the reader keeps or follows."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Q, QuerySet

from institutions.models import AuthorshipInstitution
from papers.models import Authorship, Paper, PaperChange

from .library.models import SavedPaper


def _followed(researcher_ids: Sequence[int], institution_ids: Sequence[int]) -> Q:
    """Papers by these researchers or with an author at these institutions: semi-joins on the
    (researcher, paper) and (institution, paper) indexes, no DISTINCT."""
    wanted = Q(
        pk__in=Authorship.objects.filter(researcher_id__in=researcher_ids).values("paper_id")
    )
    if institution_ids:
        wanted |= Q(
            pk__in=AuthorshipInstitution.objects.filter(institution_id__in=institution_ids).values(
                "paper_id"
            )
        )
    return wanted


def feed_papers(
    *,
    researcher_ids: list[int],
    institution_ids: Sequence[int] = (),
    since: datetime | None = None,
) -> QuerySet[Paper]:
    """Newest papers by these researchers or from these institutions."""
    papers = Paper.objects.filter(
        _followed(researcher_ids, list(institution_ids)), is_deleted=False
    )
    if since is not None:
        papers = papers.filter(published__gt=since)
    return papers.order_by("-published", "-id")


def digest_papers(
    *,
    researcher_ids: Sequence[int],
    since: datetime,
    now: datetime,
    institution_ids: Sequence[int] = (),
) -> QuerySet[Paper]:
    """Papers new to a digest reader since `since`: published since then, or published a little
    earlier (DIGEST_LATE_MATCH_DAYS) but only matched to a followed researcher since then, so a
    paper that matching reached after the last digest is not lost. Older back-catalogue that
    matching attaches later belongs on the researcher's page, not in a digest. Papers from the
    followed institutions count when published since then."""
    followed = Authorship.objects.filter(researcher_id__in=researcher_ids)
    late_cutoff = since - timedelta(days=settings.DIGEST_LATE_MATCH_DAYS)
    return Paper.objects.filter(
        Q(_followed(researcher_ids, institution_ids), published__gt=since)
        | Q(
            pk__in=followed.filter(matched_at__gt=since).values("paper_id"),
            published__gt=late_cutoff,
        ),
        # Implied by both branches, and said outright: PostgreSQL does not take a bound out of
        # an OR, so without it the published index was read back to the archive's first
        # paper whenever fewer papers than asked for were found (2.9 s at 1M papers for a
        # reader following one researcher, benchmarks/digest.py).
        published__gt=late_cutoff,
        is_deleted=False,
        published__lte=now,
    ).order_by("-published", "-id")


def feed_count(*, researcher_ids: Sequence[int], institution_ids: Sequence[int] = ()) -> int:
    """How many papers the feed holds, counted on the authorship and institution-link indexes
    alone (index-only scans of the followed rows): counting through the semi-join on papers makes
    PostgreSQL hash the whole paper table. Withdrawn-and-deleted papers are not subtracted."""
    by_researcher = Authorship.objects.filter(researcher_id__in=researcher_ids).values("paper_id")
    if not institution_ids:
        return by_researcher.distinct().count()
    at_institutions = AuthorshipInstitution.objects.filter(
        institution_id__in=institution_ids
    ).values("paper_id")
    # UNION (not ALL) counts a paper found both ways once; Authorship's default ordering has to
    # go, a compound statement takes none.
    return by_researcher.order_by().union(at_institutions.order_by()).count()


class FeedPage:
    """The feed for Django's Paginator: slices are the paper queryset, the count is feed_count
    capped at `limit`, because the feed is for what is new: a paper deep in a prolific
    researcher's past is on their page, and an OFFSET that deep costs a scan of the papers
    (until Authorship carries `published`, the feed cannot be a merge of per-researcher ranges).
    """

    def __init__(
        self, *, researcher_ids: list[int], limit: int, institution_ids: Sequence[int] = ()
    ):
        self.papers = feed_papers(researcher_ids=researcher_ids, institution_ids=institution_ids)
        self.researcher_ids = researcher_ids
        self.institution_ids = list(institution_ids)
        self.limit = limit
        self._total: int | None = None

    @property
    def total(self) -> int:
        if self._total is None:
            self._total = feed_count(
                researcher_ids=self.researcher_ids, institution_ids=self.institution_ids
            )
        return self._total

    def count(self) -> int:
        return min(self.total, self.limit)

    def __getitem__(self, item: slice) -> QuerySet[Paper]:
        return self.papers[item]

    def __len__(self) -> int:
        return self.count()


def paper_changes_for_user(
    *,
    user: User,
    researcher_ids: Sequence[int] = (),
    since: datetime | None = None,
    limit: int = 20,
) -> list[PaperChange]:
    """The newest changes the harvest recorded ("v3 posted", "withdrawn", "published in …") of
    papers in the reader's lists or by the researchers they follow (`researcher_ids`), newest
    first. One query: a range of the recorded-at index, each change checked against the two
    memberships."""
    wanted = Q(paper_id__in=SavedPaper.objects.filter(reading_list__user=user).values("paper_id"))
    if researcher_ids:
        wanted |= Q(
            paper_id__in=Authorship.objects.filter(researcher_id__in=list(researcher_ids)).values(
                "paper_id"
            )
        )
    changes = PaperChange.objects.filter(wanted).select_related("paper")
    if since is not None:
        changes = changes.filter(recorded_at__gte=since)
    return list(changes.order_by("-recorded_at", "-id")[:limit])
