"""Curation services on a real database: merge, split, move, "not the same person"."""

from __future__ import annotations

import pytest

from accounts.models import Claim, Follow
from papers.models import Authorship
from researchers.curation.decisions import (
    CurationError,
    authorship_move,
    merge_plan,
    merge_split,
    merge_split_blockers,
    researchers_mark_distinct,
    researchers_merge,
)
from researchers.models import (
    CurationEntry,
    DistinctPair,
    IdentityConflict,
    PinnedAuthorship,
    Researcher,
    ResearcherExternalId,
)
from researchers.page_figures import researchers_update_stats


def state():
    """Everything a merge and a split touch, in a comparable form."""
    return {
        "authorships": sorted(Authorship.objects.values_list("pk", "researcher_id")),
        "ids": sorted(ResearcherExternalId.objects.values_list("source", "value", "researcher_id")),
        "follows": sorted(Follow.objects.values_list("user_id", "researcher_id", "created_at")),
        "claims": sorted(
            Claim.objects.values_list("user_id", "researcher_id", "status", "message", "created_at")
        ),
        "merged": sorted(Researcher.objects.values_list("pk", "merged_into_id")),
        "papers": sorted(Researcher.objects.values_list("pk", "paper_count")),
    }


@pytest.fixture
def world(paper_factory, researcher_factory, link_author, reader_factory):
    """Two records of one person (plus a bystander), each with papers, ids, follows, claims."""
    a = researcher_factory("Pedro G. Ferreira")
    b = researcher_factory("Pedro G. Ferreira")
    coauthor = researcher_factory("Harry Desmond")
    papers_a = [
        paper_factory(authors=["Deaglan Bartlett", "Harry Desmond", "Pedro G. Ferreira"])
        for _ in range(3)
    ]
    papers_b = [paper_factory(authors=["Harry Desmond", "Pedro G. Ferreira"]) for _ in range(2)]
    for p in papers_a:
        link_author(p, 3, a)
        link_author(p, 2, coauthor)
    for p in papers_b:
        link_author(p, 2, b)
        link_author(p, 1, coauthor)
    ResearcherExternalId.objects.create(researcher=a, source="s2", value="2298007")
    ResearcherExternalId.objects.create(researcher=b, source="s2", value="144135411")
    ResearcherExternalId.objects.create(researcher=b, source="openalex", value="A5020003001")
    both, only_a, only_b = reader_factory(), reader_factory(), reader_factory()
    for user, record in ((both, a), (both, b), (only_a, a), (only_b, b)):
        Follow.objects.create(user=user, researcher=record)
    Claim.objects.create(user=both, researcher=a, message="me, older record")
    Claim.objects.create(user=both, researcher=b, status=Claim.Status.CONFIRMED)
    researchers_update_stats([a.pk, b.pk, coauthor.pk])
    return {
        "a": a,
        "b": b,
        "coauthor": coauthor,
        "users": (both, only_a, only_b),
        "papers_a": papers_a,
        "papers_b": papers_b,
    }


@pytest.mark.django_db
def test_preview_says_what_moves(world):
    a, b = world["a"], world["b"]
    plan = merge_plan(survivor_id=b.pk, folded_ids=[a.pk])
    assert not plan.blockers
    assert plan.authorship_count == 3 and plan.external_id_count == 1
    assert plan.participants["accounts"] == {
        "follows": {"move": 1, "already_on_survivor": 1},
        "claims": {"move": 0, "already_on_survivor": 1},
    }
    assert state()["papers"] == sorted([(a.pk, 3), (b.pk, 2), (world["coauthor"].pk, 5)])


@pytest.mark.django_db
def test_merge_then_split_round_trip_loses_and_duplicates_nothing(world, curator):
    a, b = world["a"], world["b"]
    both, only_a, only_b = world["users"]
    original = state()

    entry = researchers_merge(survivor_id=b.pk, folded_ids=[a.pk], actor=curator, note="same")
    a.refresh_from_db()
    b.refresh_from_db()
    assert a.merged_into_id == b.pk and b.merged_into_id is None
    assert Authorship.objects.filter(researcher=b).count() == 5
    assert not Authorship.objects.filter(researcher=a).exists()
    assert set(b.external_ids.values_list("value", flat=True)) == {
        "2298007",
        "144135411",
        "A5020003001",
    }
    # Followers of either follow the survivor, once.
    assert sorted(Follow.objects.values_list("user_id", "researcher_id")) == sorted(
        [(both.pk, b.pk), (only_a.pk, b.pk), (only_b.pk, b.pk)]
    )
    assert list(Claim.objects.values_list("user_id", "researcher_id", "status")) == [
        (both.pk, b.pk, "confirmed")
    ]
    assert (a.paper_count, b.paper_count) == (0, 5)
    assert entry.actor == curator and entry.action == "merge"
    assert set(entry.researchers.values_list("pk", flat=True)) == {a.pk, b.pk}

    split = merge_split(entry_id=entry.pk, actor=curator)
    assert split.action == "split"
    entry.refresh_from_db()
    assert entry.undone_by == split
    assert state() == original
    with pytest.raises(CurationError, match="already split"):
        merge_split(entry_id=entry.pk, actor=curator)


@pytest.mark.django_db
def test_merge_chain_points_everything_at_the_final_survivor(
    world, researcher_factory, curator, client
):
    a, b = world["a"], world["b"]
    c = researcher_factory("Pedro G. Ferreira")
    researchers_merge(survivor_id=b.pk, folded_ids=[a.pk], actor=curator)
    researchers_merge(survivor_id=c.pk, folded_ids=[b.pk], actor=curator)
    a.refresh_from_db()
    assert a.merged_into_id == c.pk  # re-pointed: one hop, whatever the chain length
    assert Authorship.objects.filter(researcher=c).count() == 5
    assert Follow.objects.filter(researcher=c).count() == 3
    response = client.get(f"/researchers/{a.pk}")
    assert response.status_code == 301
    assert response["Location"] == c.get_absolute_url()
    response = client.get(f"/researchers/{b.url_slug}")
    assert response.status_code == 301 and response["Location"] == c.get_absolute_url()


@pytest.mark.django_db
def test_split_is_blocked_by_a_later_merge_and_by_moved_authorships(
    world, researcher_factory, curator
):
    a, b = world["a"], world["b"]
    c = researcher_factory("Pedro G. Ferreira")
    first = researchers_merge(survivor_id=b.pk, folded_ids=[a.pk], actor=curator)
    second = researchers_merge(survivor_id=c.pk, folded_ids=[b.pk], actor=curator)
    blockers = merge_split_blockers(first)
    assert any(f"Merge #{second.pk}" in text for text in blockers)
    with pytest.raises(CurationError, match="split it first"):
        merge_split(entry_id=first.pk, actor=curator)
    merge_split(entry_id=second.pk, actor=curator)
    assert merge_split_blockers(first) == []

    moved = Authorship.objects.filter(paper=world["papers_a"][0], position=3).get()
    authorship_move(authorship_id=moved.pk, to_researcher_id=c.pk, actor=curator)
    blockers = merge_split_blockers(first)
    assert len(blockers) == 1 and "1 of the 3 authorships" in blockers[0]
    assert world["papers_a"][0].arxiv_id in blockers[0]
    before = state()
    with pytest.raises(CurationError):
        merge_split(entry_id=first.pk, actor=curator)
    assert state() == before


@pytest.mark.django_db
def test_move_one_authorship_pins_it_and_updates_both_records(world, curator):
    a, coauthor = world["a"], world["coauthor"]
    authorship = Authorship.objects.get(paper=world["papers_a"][0], position=3)
    entry = authorship_move(
        authorship_id=authorship.pk, to_researcher_id=world["b"].pk, actor=curator
    )
    assert entry.before["researcher"] == a.pk and entry.after["researcher"] == world["b"].pk
    assert PinnedAuthorship.objects.filter(authorship=authorship).exists()
    a.refresh_from_db()
    world["b"].refresh_from_db()
    assert (a.paper_count, world["b"].paper_count) == (2, 3)
    with pytest.raises(CurationError, match="already on that record"):
        authorship_move(authorship_id=authorship.pk, to_researcher_id=world["b"].pk, actor=curator)
    researchers_merge(survivor_id=world["b"].pk, folded_ids=[coauthor.pk], actor=curator)
    with pytest.raises(CurationError, match="merged into"):
        authorship_move(authorship_id=authorship.pk, to_researcher_id=coauthor.pk, actor=curator)


@pytest.mark.django_db
def test_not_the_same_person_forbids_the_merge(world, curator):
    a, b = world["a"], world["b"]
    IdentityConflict.objects.create(
        kind=IdentityConflict.UNLINKED, researcher=a, other_researcher=b, s2_id="2298007"
    )
    entry = researchers_mark_distinct(first_id=b.pk, second_id=a.pk, actor=curator)
    assert entry.action == "distinct"
    assert DistinctPair.objects.get().low_id == min(a.pk, b.pk)
    assert researchers_mark_distinct(first_id=a.pk, second_id=b.pk, actor=curator) is None
    assert IdentityConflict.objects.get().status == IdentityConflict.DISMISSED
    before = state()
    with pytest.raises(CurationError, match="not the same person"):
        researchers_merge(survivor_id=a.pk, folded_ids=[b.pk], actor=curator)
    assert state() == before
    assert CurationEntry.objects.filter(action="merge").count() == 0


@pytest.mark.django_db
def test_merge_refuses_merged_or_missing_records(world, curator):
    a, b, c = world["a"], world["b"], world["coauthor"]
    researchers_merge(survivor_id=b.pk, folded_ids=[a.pk], actor=curator)
    with pytest.raises(CurationError, match="already merged"):
        researchers_merge(survivor_id=c.pk, folded_ids=[a.pk], actor=curator)
    with pytest.raises(CurationError, match="does not exist"):
        researchers_merge(survivor_id=c.pk, folded_ids=[999999], actor=curator)
    with pytest.raises(CurationError, match="at least one"):
        researchers_merge(survivor_id=c.pk, folded_ids=[c.pk], actor=curator)


@pytest.mark.django_db
def test_merge_resolves_conflicts_between_the_records_and_split_reopens_them(world, curator):
    a, b = world["a"], world["b"]
    conflict = IdentityConflict.objects.create(
        kind=IdentityConflict.S2_SPLIT,
        researcher=b,
        other_researcher=a,
        s2_id="144135411",
        openalex_id="A5020003001",
    )
    entry = researchers_merge(survivor_id=b.pk, folded_ids=[a.pk], actor=curator)
    conflict.refresh_from_db()
    assert conflict.status == IdentityConflict.RESOLVED
    merge_split(entry_id=entry.pk, actor=curator)
    conflict.refresh_from_db()
    assert conflict.status == IdentityConflict.OPEN
