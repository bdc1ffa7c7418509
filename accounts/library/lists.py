"""A reader's lists and the papers saved in them: "Reading list" made on first use, named lists
(at most LIBRARY_MAX_LISTS), saving and removing papers, sharing a list by link; and the reads
of the lists, their papers and the save controls."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db import IntegrityError, transaction
from django.db.models import Count, QuerySet
from django.urls import reverse
from django.utils import timezone

from papers.models import Paper

from .models import ReadingList, SavedPaper

# A reader's lists: enough for any way of sorting papers, few enough that every save control
# can offer them all.
LIBRARY_MAX_LISTS = 100


# Bytes of entropy in a shared list's link (token_urlsafe's argument): 32 characters.
SHARE_TOKEN_BYTES = 24


class LibraryError(ValueError):
    """A change to a reader's library that cannot be made; the message is shown to them."""


def reading_list_default(*, user: User) -> ReadingList:
    """The reader's "Reading list", made on first use. Idempotent (the (user, name) constraint
    decides between two concurrent first saves)."""
    # get_or_create takes the row a concurrent request made: after its insert fails on the
    # constraint it reads again.
    reading_list, _ = ReadingList.objects.get_or_create(user=user, name=ReadingList.DEFAULT_NAME)
    return reading_list


def _list_name(name: str) -> str:
    cleaned = " ".join(name.split())[:100]
    if not cleaned:
        raise LibraryError("A list needs a name.")
    return cleaned


def reading_list_create(*, user: User, name: str) -> ReadingList:
    """A new named list. Raises LibraryError for an empty name, a name the reader already uses,
    or past LIBRARY_MAX_LISTS lists."""
    cleaned = _list_name(name)
    try:
        with transaction.atomic():
            # Counted with the reader's row locked until the list is made, so lists made at
            # once count each other (8 at 96 lists left 101). SQLite serialises writers.
            list(User.objects.select_for_update().filter(pk=user.pk).values("pk"))
            if ReadingList.objects.filter(user=user).count() >= LIBRARY_MAX_LISTS:
                raise LibraryError(
                    f"You have {LIBRARY_MAX_LISTS} lists, as many as a library holds."
                )
            return ReadingList.objects.create(user=user, name=cleaned)
    except IntegrityError as exc:
        raise LibraryError(f"You already have a list called “{cleaned}”.") from exc


def reading_list_rename(*, reading_list: ReadingList, name: str) -> ReadingList:
    cleaned = _list_name(name)
    if cleaned == reading_list.name:
        return reading_list
    reading_list.name = cleaned
    try:
        with transaction.atomic():
            reading_list.save(update_fields=["name", "modified_at"])
    except IntegrityError as exc:
        raise LibraryError(f"You already have a list called “{cleaned}”.") from exc
    return reading_list


def reading_list_delete(*, reading_list: ReadingList) -> None:
    """Delete the list with its saved papers and notes; its shared link stops working."""
    reading_list.delete()


def reading_list_share(*, reading_list: ReadingList) -> ReadingList:
    """Give the list a read-only link. Idempotent: a shared list keeps its link."""
    if not reading_list.share_token:
        reading_list.share_token = secrets.token_urlsafe(SHARE_TOKEN_BYTES)
        reading_list.shared_at = timezone.now()
        reading_list.save(update_fields=["share_token", "shared_at", "modified_at"])
    return reading_list


def reading_list_unshare(*, reading_list: ReadingList) -> ReadingList:
    """Make the list private again: its link stops working for good (sharing again makes a new
    one)."""
    if reading_list.share_token:
        reading_list.share_token = None
        reading_list.shared_at = None
        reading_list.save(update_fields=["share_token", "shared_at", "modified_at"])
    return reading_list


def paper_save(*, user: User, paper: Paper, reading_list: ReadingList | None = None) -> SavedPaper:
    """Save the paper into one of the reader's lists ("Reading list" when none is named).
    Idempotent: saving twice returns the saved paper, its note kept."""
    target = reading_list or reading_list_default(user=user)
    if target.user_id != user.pk:
        raise LibraryError("That list is not yours.")
    saved, _ = SavedPaper.objects.get_or_create(reading_list=target, paper=paper)
    return saved


def paper_unsave(
    *, user: User, paper_id: int, reading_lists: Iterable[ReadingList] | None = None
) -> int:
    """Take the paper out of these lists of the reader's (all of them when none are named), its
    notes with it. Returns rows removed; 0 when it was not saved, which is not an error."""
    saved = SavedPaper.objects.filter(reading_list__user=user, paper_id=paper_id)
    if reading_lists is not None:
        saved = saved.filter(reading_list__in=[r.pk for r in reading_lists])
    deleted, _ = saved.delete()
    return deleted


def reading_lists_with_counts(*, user: User) -> QuerySet[ReadingList]:
    """The reader's lists, oldest first ("Reading list" leads), each with `paper_count`."""
    return (
        ReadingList.objects.filter(user=user)
        .annotate(paper_count=Count("saved"))
        .order_by("created_at", "pk")
    )


def reading_lists_for_user(*, user: User) -> list[ReadingList]:
    """All the reader's lists with their counts: one query, at most LIBRARY_MAX_LISTS rows."""
    return list(reading_lists_with_counts(user=user))


def reading_list_of_user(*, user: User, pk: int) -> ReadingList | None:
    return ReadingList.objects.filter(user=user, pk=pk).first()


def reading_list_shared(*, token: str) -> ReadingList | None:
    """The list shared under this link, if it still is."""
    if not token:
        return None
    return ReadingList.objects.filter(share_token=token).select_related("user").first()


def saved_papers(*, reading_list: ReadingList) -> QuerySet[SavedPaper]:
    """A list's saved papers, newest saved first, with their papers: slice it (one index range
    scan of (list, -created_at, -id) per page)."""
    return (
        SavedPaper.objects.filter(reading_list=reading_list)
        .select_related("paper")
        .order_by("-created_at", "-id")
    )


def saved_paper_of_user(*, user: User, reading_list_id: int, paper_id: int) -> SavedPaper | None:
    return (
        SavedPaper.objects.filter(
            reading_list_id=reading_list_id, reading_list__user=user, paper_id=paper_id
        )
        .select_related("reading_list", "paper")
        .first()
    )


def saved_paper_by_arxiv_id(
    *, user: User, reading_list_id: int, arxiv_id: str
) -> SavedPaper | None:
    return (
        SavedPaper.objects.filter(
            reading_list_id=reading_list_id,
            reading_list__user=user,
            paper__arxiv_id=arxiv_id,
        )
        .select_related("reading_list", "paper")
        .first()
    )


def saved_list_ids(*, user: User | AnonymousUser, paper_ids: Sequence[int]) -> dict[int, list[int]]:
    """For each of these papers the reader saved, the ids of the lists it is in (one query on
    the paper index, joined to the reader's lists)."""
    found: dict[int, list[int]] = {}
    if not paper_ids or not user.is_authenticated:
        return found
    rows = (
        SavedPaper.objects.filter(paper_id__in=list(paper_ids), reading_list__user=user)
        .order_by("reading_list_id")
        .values_list("paper_id", "reading_list_id")
    )
    for paper_id, list_id in rows:
        found.setdefault(paper_id, []).append(list_id)
    return found


@dataclass(frozen=True)
class SaveControl:
    """What one paper's save control shows to one reader."""

    paper: Paper
    signed_in: bool
    lists: Sequence[ReadingList]
    saved_in: Sequence[ReadingList]
    next_url: str
    # Reversed once per batch of controls: a list page's fragment holds dozens of them.
    save_url: str = ""
    unsave_url: str = ""

    @property
    def dom_id(self) -> str:
        return f"save-{self.paper.pk}"

    @property
    def unsaved_lists(self) -> list[ReadingList]:
        saved = {r.pk for r in self.saved_in}
        return [r for r in self.lists if r.pk not in saved]


def save_controls(
    *, user: User | AnonymousUser, papers: Sequence[Paper], next_url: str
) -> list[SaveControl]:
    """The save controls of these papers for this reader: two queries whatever their number
    (the reader's lists, and which of the papers they saved)."""
    if not user.is_authenticated:
        return [
            SaveControl(paper=p, signed_in=False, lists=(), saved_in=(), next_url=next_url)
            for p in papers
        ]
    lists = reading_lists_for_user(user=user)
    by_id = {r.pk: r for r in lists}
    saved = saved_list_ids(user=user, paper_ids=[p.pk for p in papers])
    save_url, unsave_url = reverse("accounts:save"), reverse("accounts:unsave")
    return [
        SaveControl(
            paper=p,
            signed_in=True,
            lists=lists,
            saved_in=[by_id[pk] for pk in saved.get(p.pk, []) if pk in by_id],
            next_url=next_url,
            save_url=save_url,
            unsave_url=unsave_url,
        )
        for p in papers
    ]
