"""Following researchers and institutions: the follows themselves (a merged record is followed
through its survivor), who follows what, and the follow button."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest
from django.urls import reverse

from institutions.models import Institution
from researchers.models import Researcher
from researchers.selectors import researcher_survivor_id, researcher_survivor_ids

from .models import Follow, InstitutionFollow


class FollowError(ValueError):
    """A follow that cannot be made; the message is shown to the user."""


def researcher_final(*, researcher: Researcher) -> Researcher:
    """The record a merged researcher ended up in (itself when not merged)."""
    if not researcher.merged_into_id:
        return researcher
    survivor_id = researcher_survivor_id(researcher.merged_into_id)
    if survivor_id is None:
        raise FollowError("This researcher record is part of a merge loop or too long a chain.")
    return Researcher.objects.get(pk=survivor_id)


def researcher_follow(*, user: User, researcher: Researcher) -> Follow:
    """Follow a researcher; a merged record is followed through its surviving one.

    Idempotent: following twice returns the existing follow (the unique constraint decides, so
    two concurrent requests cannot make two rows)."""
    # get_or_create takes the row a concurrent request made: after its insert fails on the
    # constraint it reads again.
    follow, _ = Follow.objects.get_or_create(
        user=user, researcher=researcher_final(researcher=researcher)
    )
    return follow


def researcher_unfollow(*, user: User, researcher: Researcher) -> int:
    """Stop following a researcher (and the record it was merged into). Returns rows removed;
    0 when the user did not follow it, which is not an error."""
    ids = {researcher.pk}
    try:
        ids.add(researcher_final(researcher=researcher).pk)
    except FollowError:
        pass
    # A follow made before its record was merged into this one counts as following it
    # (followed_researcher_ids): unfollowing ends that one too.
    deleted, _ = Follow.objects.filter(
        user=user, researcher_id__in=_followed_through(user, ids)
    ).delete()
    return deleted


def _followed_through(user: User, researcher_ids: set[int]) -> set[int]:
    """The user's follows of `researcher_ids`, and of records merged into one of them since
    the follow was made. One query; a walk of merges only when the user follows any."""
    followed = set(
        Follow.objects.filter(user=user)
        .filter(Q(researcher_id__in=researcher_ids) | Q(researcher__merged_into__isnull=False))
        .values_list("researcher_id", flat=True)
    )
    survivors = researcher_survivor_ids(followed - researcher_ids)
    return {r for r in followed if r in researcher_ids or survivors.get(r) in researcher_ids}


def institution_follow(*, user: User, institution: Institution) -> InstitutionFollow:
    """Follow an institution. Idempotent, as researcher_follow."""
    follow, _ = InstitutionFollow.objects.get_or_create(user=user, institution=institution)
    return follow


def institution_unfollow(*, user: User, institution: Institution) -> int:
    """Stop following an institution. Returns rows removed (0 when it was not followed)."""
    deleted, _ = InstitutionFollow.objects.filter(user=user, institution=institution).delete()
    return deleted


def followed_researcher_ids(*, user: User) -> list[int]:
    """Ids of the researchers the user follows, with the survivors of any that were merged since
    the follow was made. One query, plus one per merge level actually present."""
    ids = set(Follow.objects.filter(user=user).values_list("researcher_id", flat=True))
    return sorted(ids | set(researcher_survivor_ids(ids).values()))


def followed_institution_ids(*, user: User) -> list[int]:
    return sorted(
        InstitutionFollow.objects.filter(user=user).values_list("institution_id", flat=True)
    )


def follows_for_user(*, user: User) -> QuerySet[Follow]:
    return (
        Follow.objects.filter(user=user).select_related("researcher").order_by("-created_at", "-id")
    )


def follower_count(*, researcher: Researcher) -> int:
    return Follow.objects.filter(researcher=researcher).count()


def is_following(*, user: User, researcher: Researcher) -> bool:
    """Whether the user follows the researcher, directly or through a record merged into it
    since (as followed_researcher_ids counts it)."""
    if not user.is_authenticated:
        return False
    return bool(_followed_through(user, {researcher.pk}))


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
