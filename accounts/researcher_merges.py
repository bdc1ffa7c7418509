"""Follows and claims take part in researcher merges (registered in AccountsConfig.ready()).

A merge moves each follow and claim of a folded record to the survivor; where the user already
had one on the survivor, the folded one is deleted (a user follows a record once) and its data is
kept in the merge's audit entry, so that a split can recreate it exactly. Runs inside the
curation transaction, with a fixed number of queries per merge.
"""

from __future__ import annotations

from django.utils.dateparse import parse_datetime

from researchers.curation.decisions import MergeParticipant

from .models import Claim, Follow
from .ownership.verification import verification_sync

CLAIM_FIELDS = ("status", "message", "reviewed_by_id", "reviewed_at", "created_at")


def _preview(*, survivor_id: int, folded_ids: list[int]) -> dict:
    out = {}
    for label, model in (("follows", Follow), ("claims", Claim)):
        on_survivor = set(
            model.objects.filter(researcher_id=survivor_id).values_list("user_id", flat=True)
        )
        users = list(
            model.objects.filter(researcher_id__in=folded_ids).values_list("user_id", flat=True)
        )
        # A user following two of the folded records ends up with one follow, as with the survivor.
        moving = set(users) - on_survivor
        out[label] = {"move": len(moving), "already_on_survivor": len(users) - len(moving)}
    return out


def _merge_rows(model, *, survivor_id: int, folded_ids: list[int], keep: tuple[str, ...]) -> dict:
    on_survivor = set(
        model.objects.filter(researcher_id=survivor_id).values_list("user_id", flat=True)
    )
    moved: list[list[int]] = []
    dropped: list[dict] = []
    for row in (
        model.objects.filter(researcher_id__in=folded_ids)
        .order_by("researcher_id", "pk")
        .values("pk", "user_id", "researcher_id", *keep)
    ):
        if row["user_id"] in on_survivor:
            dropped.append(
                {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
            )
        else:
            on_survivor.add(row["user_id"])
            moved.append([row["pk"], row["researcher_id"]])
    model.objects.filter(pk__in=[d["pk"] for d in dropped]).delete()
    model.objects.filter(pk__in=[pk for pk, _ in moved]).update(researcher_id=survivor_id)
    return {"moved": moved, "dropped": dropped}


def _merge(*, survivor_id: int, folded_ids: list[int]) -> dict:
    moved = {
        "follows": _merge_rows(
            Follow, survivor_id=survivor_id, folded_ids=folded_ids, keep=("created_at",)
        ),
        "claims": _merge_rows(
            Claim, survivor_id=survivor_id, folded_ids=folded_ids, keep=CLAIM_FIELDS
        ),
    }
    verification_sync(researcher_ids=[survivor_id])
    return moved


def _split_rows(model, *, survivor_id: int, data: dict) -> None:
    by_origin: dict[int, list[int]] = {}
    for pk, origin in data["moved"]:
        by_origin.setdefault(origin, []).append(pk)
    for origin, pks in by_origin.items():
        # A follow the user removed since the merge stays removed.
        model.objects.filter(pk__in=pks, researcher_id=survivor_id).update(researcher_id=origin)
    rows = []
    for row in data["dropped"]:
        fields = {k: v for k, v in row.items() if k != "pk"}
        for name in ("created_at", "reviewed_at"):
            if fields.get(name):
                fields[name] = parse_datetime(fields[name])
        rows.append(model(**fields))
    # The unique (user, researcher) constraint makes this idempotent against a user who
    # re-followed the folded record by hand in between.
    created = model.objects.bulk_create(rows, ignore_conflicts=True)
    # auto_now_add overwrote created_at: put the original dates back.
    for row, original in zip(created, data["dropped"], strict=True):
        if original.get("created_at"):
            model.objects.filter(user_id=row.user_id, researcher_id=row.researcher_id).update(
                created_at=parse_datetime(original["created_at"])
            )


def _split(*, survivor_id: int, data: dict) -> None:
    _split_rows(Follow, survivor_id=survivor_id, data=data["follows"])
    _split_rows(Claim, survivor_id=survivor_id, data=data["claims"])
    origins = {origin for _, origin in data["claims"]["moved"]}
    origins |= {row["researcher_id"] for row in data["claims"]["dropped"]}
    verification_sync(researcher_ids=sorted({survivor_id, *origins}))


PARTICIPANT = MergeParticipant(name="accounts", preview=_preview, merge=_merge, split=_split)
