"""Follows and claims through researcher merges and splits (accounts' merge participant)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Permission

from accounts.follows import researcher_follow
from accounts.models import Claim, Follow
from researchers.curation.decisions import merge_participants, merge_split, researchers_merge


@pytest.fixture
def curator(user_factory):
    user = user_factory(is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="curate_researcher"))
    return user


def follows():
    return sorted(Follow.objects.values_list("user_id", "researcher_id", "created_at"))


def claims():
    return sorted(
        Claim.objects.values_list(
            "user_id",
            "researcher_id",
            "status",
            "message",
            "reviewed_by_id",
            "reviewed_at",
            "created_at",
        )
    )


def test_accounts_registers_its_participant_at_startup():
    assert [p.name for p in merge_participants()] == ["accounts"]


@pytest.mark.django_db
def test_followers_of_either_follow_the_survivor_once_and_get_back_their_follows(
    user_factory, researcher_factory, curator
):
    a, b, c = (researcher_factory("Ada Lovelace") for _ in range(3))
    both, only_a, only_b = user_factory(), user_factory(), user_factory()
    for user, record in ((both, a), (both, b), (only_a, a), (only_b, b), (only_a, c)):
        Follow.objects.create(user=user, researcher=record)
    # Distinct creation dates, so the round trip can tell a recreated row from the original.
    for n, follow in enumerate(Follow.objects.order_by("pk")):
        Follow.objects.filter(pk=follow.pk).update(created_at=datetime(2025, 1, 1 + n, tzinfo=UTC))
    original = follows()

    entry = researchers_merge(survivor_id=a.pk, folded_ids=[b.pk], actor=curator)
    assert sorted(Follow.objects.values_list("user_id", "researcher_id")) == sorted(
        [(both.pk, a.pk), (only_a.pk, a.pk), (only_b.pk, a.pk), (only_a.pk, c.pk)]
    )
    data = entry.after["participants"]["accounts"]["follows"]
    assert len(data["moved"]) == 1 and len(data["dropped"]) == 1
    # Following the folded record now follows the survivor; nothing is duplicated.
    b.refresh_from_db()
    researcher_follow(user=only_b, researcher=b)
    assert Follow.objects.filter(user=only_b).count() == 1

    merge_split(entry_id=entry.pk, actor=curator)
    assert follows() == original


@pytest.mark.django_db
def test_claims_move_and_come_back_with_their_review(user_factory, researcher_factory, curator):
    a, b = researcher_factory("Grace Hopper"), researcher_factory("Grace Hopper")
    owner, other = user_factory(), user_factory()
    Claim.objects.create(user=owner, researcher=a, message="my thesis is on this record")
    Claim.objects.create(
        user=owner,
        researcher=b,
        status=Claim.Status.CONFIRMED,
        reviewed_by=curator,
        reviewed_at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    Claim.objects.create(user=other, researcher=b, status=Claim.Status.REJECTED)
    original = claims()

    entry = researchers_merge(survivor_id=a.pk, folded_ids=[b.pk], actor=curator)
    assert sorted(Claim.objects.values_list("user_id", "researcher_id", "status")) == sorted(
        [(owner.pk, a.pk, "pending"), (other.pk, a.pk, "rejected")]
    )
    merge_split(entry_id=entry.pk, actor=curator)
    assert claims() == original


@pytest.mark.django_db
def test_a_follow_removed_after_the_merge_stays_removed_after_the_split(
    user_factory, researcher_factory, curator
):
    a, b = researcher_factory("Alan Turing"), researcher_factory("Alan Turing")
    user = user_factory()
    Follow.objects.create(user=user, researcher=b)
    entry = researchers_merge(survivor_id=a.pk, folded_ids=[b.pk], actor=curator)
    Follow.objects.filter(user=user).delete()
    merge_split(entry_id=entry.pk, actor=curator)
    assert not Follow.objects.exists()


@pytest.mark.django_db
def test_api_answers_with_the_final_survivor_after_a_merge_chain(
    user_factory, researcher_factory, curator
):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    a, b, c = (researcher_factory("Dan Zhao") for _ in range(3))
    researchers_merge(survivor_id=b.pk, folded_ids=[a.pk], actor=curator)
    researchers_merge(survivor_id=c.pk, folded_ids=[b.pk], actor=curator)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user_factory()).key}")
    response = api.post("/api/v1/me/follows/", {"researcher": a.pk}, format="json")
    assert response.status_code == 201 and response.json()["researcher"] == c.pk
    assert api.get("/api/v1/me/follows/").json()["results"][0]["url"].endswith(c.get_absolute_url())
