"""Reads for accounts pages, the API and the digest. Each runs a fixed number of queries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest
from django.urls import reverse

from institutions.models import AuthorshipInstitution, Institution
from papers.models import Authorship, Paper, PaperCategory, PaperChange
from researchers.models import Researcher
from researchers.selectors import researcher_same_name, researcher_survivor_ids

from .library.models import SavedPaper
from .models import (
    Claim,
    Follow,
    InstitutionFollow,
    Profile,
)

# How many of the newest papers in the chosen fields suggestions look at: enough to find the
# active researchers, few enough that the query is one short index range scan per field.
SUGGESTION_PAPER_WINDOW = 400


def onboarding_pending(*, user: User) -> bool:
    return Profile.objects.filter(user=user, onboarding=Profile.Onboarding.PENDING).exists()


def followed_researcher_ids(*, user: User) -> list[int]:
    """Ids of the researchers the user follows, with the survivors of any that were merged since
    the follow was made. One query, plus one per merge level actually present."""
    ids = set(Follow.objects.filter(user=user).values_list("researcher_id", flat=True))
    return sorted(ids | set(researcher_survivor_ids(ids).values()))


def followed_institution_ids(*, user: User) -> list[int]:
    return sorted(
        InstitutionFollow.objects.filter(user=user).values_list("institution_id", flat=True)
    )


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


def follows_for_user(*, user: User) -> QuerySet[Follow]:
    return (
        Follow.objects.filter(user=user).select_related("researcher").order_by("-created_at", "-id")
    )


def claims_for_user(*, user: User) -> QuerySet[Claim]:
    return Claim.objects.filter(user=user).select_related("researcher").order_by("-created_at")


def follower_count(*, researcher: Researcher) -> int:
    return Follow.objects.filter(researcher=researcher).count()


def is_following(*, user: User, researcher: Researcher) -> bool:
    if not user.is_authenticated:
        return False
    return Follow.objects.filter(user=user, researcher=researcher).exists()


def researchers_suggested(
    *, fields: list[str], exclude_ids: list[int] | None = None, limit: int = 12
) -> list[Researcher]:
    """Researchers active in the user's fields: the authors of the newest papers in those
    categories, ranked by how many of those papers they wrote, then by papers here.

    One short index range scan per field (PaperCategory code, published; at most 20 fields),
    then one query for their matched authorships and one for the researchers."""
    if not fields:
        return []
    per_field = max(SUGGESTION_PAPER_WINDOW // len(fields), 50)
    paper_ids: set[int] = set()
    for code in fields[:20]:
        paper_ids.update(
            PaperCategory.objects.filter(code=code)
            .order_by("-published")
            .values_list("paper_id", flat=True)[:per_field]
        )
    if not paper_ids:
        return []
    counts = Counter(
        Authorship.objects.filter(paper_id__in=paper_ids, researcher__isnull=False).values_list(
            "researcher_id", flat=True
        )
    )
    for rid in exclude_ids or []:
        counts.pop(rid, None)
    if not counts:
        return []
    candidates = [rid for rid, _ in counts.most_common(limit * 4)]
    researchers = Researcher.objects.filter(
        pk__in=candidates, merged_into__isnull=True, is_person=True
    )
    ranked = sorted(researchers, key=lambda r: (-counts[r.pk], -r.paper_count, r.pk))
    return ranked[:limit]


def researchers_with_follow_state(researchers: list[Researcher], *, user: User) -> list[Researcher]:
    """Set `follower_count` and `is_followed` on each researcher in one query, so that a list
    of follow buttons does not query per row (the follow_button tag reads these)."""
    ids = [r.pk for r in researchers]
    if not ids:
        return researchers
    # A signed-out reader follows nobody: the filter names no user (user_id NULL never matches).
    mine = Q(user_id=user.pk if user.is_authenticated else None)
    state = {
        row["researcher_id"]: row
        for row in Follow.objects.filter(researcher_id__in=ids)
        .values("researcher_id")
        .annotate(n=Count("id"), mine=Count("id", filter=mine))
    }
    for r in researchers:
        row = state.get(r.pk, {"n": 0, "mine": 0})
        # For this list only: follow_button_context reads them instead of asking per record.
        setattr(r, "follower_count", row["n"])  # noqa: B010
        setattr(r, "is_followed", row["mine"] > 0)  # noqa: B010
    return researchers


def institution_follow_state(*, user: User | None, institution: Institution) -> tuple[int, bool]:
    """How many follow the institution, and whether `user` does (two indexed queries)."""
    count = InstitutionFollow.objects.filter(institution=institution).count()
    following = bool(
        getattr(user, "is_authenticated", False)
        and InstitutionFollow.objects.filter(user=user, institution=institution).exists()
    )
    return count, following


def institution_follows_for_user(*, user: User) -> QuerySet[InstitutionFollow]:
    return (
        InstitutionFollow.objects.filter(user=user)
        .select_related("institution")
        .order_by("-created_at", "-id")
    )


def _button(
    request: HttpRequest | None,
    record: Researcher | Institution,
    *,
    count: int,
    following: bool,
    signed_in: bool,
    next_url: str | None,
) -> dict:
    """What the one follow button template shows, for a researcher or an institution."""
    if next_url is None:
        next_url = request.get_full_path() if request is not None else record.get_absolute_url()
    if isinstance(record, Institution):
        kind, name = "institution", record.name
        hint = "papers with an author there show in your feed"
        urls = ("accounts:follow_institution", "accounts:unfollow_institution")
    else:
        kind, name = "researcher", record.display_name
        hint = "their new papers show in your feed"
        urls = ("accounts:follow", "accounts:unfollow")
    return {
        kind: record,
        "dom_id": f"follow-{record.pk}" if kind == "researcher" else f"follow-{kind}-{record.pk}",
        "name": name,
        "hint": hint,
        "action_url": reverse(urls[1] if following else urls[0], args=[record.pk]),
        "follow_url": reverse(urls[0], args=[record.pk]),
        "unfollow_url": reverse(urls[1], args=[record.pk]),
        "follower_count": count,
        "following": following,
        "signed_in": signed_in,
        "next_url": next_url,
    }


def follow_button_context(
    request: HttpRequest | None, record: Researcher | Institution, *, next_url: str | None = None
) -> dict:
    """What a follow button shows: for the follow_tags template tag, and for the view that
    answers a follow or unfollow with the new button. For a researcher, reads `follower_count`
    and `is_followed` when a list set them (researchers_with_follow_state); otherwise two small
    indexed queries."""
    user = getattr(request, "user", None)
    signed_in = bool(user is not None and user.is_authenticated)
    if isinstance(record, Institution):
        count, following = institution_follow_state(user=user, institution=record)
    else:
        listed_count: int | None = getattr(record, "follower_count", None)
        count = follower_count(researcher=record) if listed_count is None else listed_count
        listed_following: bool | None = getattr(record, "is_followed", None)
        following = (
            signed_in and user is not None and is_following(user=user, researcher=record)
            if listed_following is None
            else listed_following
        )
    return _button(
        request, record, count=count, following=following, signed_in=signed_in, next_url=next_url
    )


# --- a researcher's own page ------------------------------------------------------------------

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


# --- news of the papers a reader keeps ----------------------------------------------------------


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
