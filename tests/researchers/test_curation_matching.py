"""Matching respects curation: a later run over recorded S2/OpenAlex answers (served on
127.0.0.1) never undoes a merge, a split, a moved authorship or a "not the same person"
decision.

S2 gives "P. Ferreira" two author ids on 2211.11461 and 2304.06333, so matching makes two
records with one name (and the same co-authors): the real-looking cluster these tests curate.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from papers.models import Authorship
from researchers.curation.decisions import (
    authorship_move,
    merge_split,
    researchers_mark_distinct,
    researchers_merge,
)
from researchers.curation.queue import curation_clusters
from researchers.matching import match_papers, papers_to_match
from researchers.models import Researcher, ResearcherExternalId

BYLINE = ["Deaglan J. Bartlett", "Harry Desmond", "Pedro G. Ferreira"]


@pytest.fixture
def matched(paper_factory, sources, clean_cache):
    papers = [
        paper_factory(
            arxiv_id=arxiv_id,
            authors=BYLINE,
            categories=["astro-ph.CO"],
            published=datetime(2023, 1 + n, 1, tzinfo=UTC),
        )
        for n, arxiv_id in enumerate(["2211.11461", "2304.06333"])
    ]
    match_papers([p.pk for p in papers])
    first, second = (Authorship.objects.get(paper=p, position=3).researcher for p in papers)
    assert first.pk != second.pk and first.name_key == second.name_key
    return papers, first, second


def ferreira_on(paper) -> int:
    return Authorship.objects.get(paper=paper, position=3).researcher_id


def snapshot():
    return (
        sorted(Authorship.objects.values_list("pk", "researcher_id")),
        sorted(ResearcherExternalId.objects.values_list("source", "value", "researcher_id")),
        sorted(Researcher.objects.values_list("pk", "merged_into_id")),
    )


@pytest.mark.django_db
def test_the_recorded_cluster_is_in_the_queue_with_its_shared_coauthors(matched):
    _, first, second = matched
    cluster = next(c for c in curation_clusters() if c.name_key == first.name_key)
    assert {r.pk for r in cluster.records} == {first.pk, second.pk}
    pair = cluster.pairs[0]
    assert pair.coauthors == ["Deaglan J. Bartlett", "Harry Desmond"]
    assert pair.fields == ["astro-ph.CO"] and pair.years_overlap
    assert pair.evidence_against() == []


@pytest.mark.django_db
def test_a_later_matching_run_keeps_the_merge(matched, curator):
    papers, first, second = matched
    researchers_merge(survivor_id=first.pk, folded_ids=[second.pk], actor=curator)
    merged = snapshot()
    result = match_papers([p.pk for p in papers])
    assert result.failed == 0 and result.researchers_created == 0
    assert result.authorships_attached == 0
    assert snapshot() == merged
    assert ferreira_on(papers[0]) == ferreira_on(papers[1]) == first.pk
    # The folded record's S2 id now resolves to the survivor.
    assert ResearcherExternalId.objects.get(source="s2", value="145209584").researcher_id == (
        first.pk
    )
    assert Researcher.objects.get(pk=second.pk).merged_into_id == first.pk
    assert not any(c.name_key == first.name_key for c in curation_clusters())


@pytest.mark.django_db
def test_a_later_matching_run_keeps_the_split(matched, curator):
    papers, first, second = matched
    before = snapshot()
    entry = researchers_merge(survivor_id=first.pk, folded_ids=[second.pk], actor=curator)
    merge_split(entry_id=entry.pk, actor=curator)
    assert snapshot() == before
    result = match_papers([p.pk for p in papers])
    assert result.researchers_created == 0 and result.authorships_attached == 0
    assert snapshot() == before
    assert (ferreira_on(papers[0]), ferreira_on(papers[1])) == (first.pk, second.pk)


@pytest.mark.django_db
def test_a_later_matching_run_keeps_a_not_the_same_decision(matched, curator):
    papers, first, second = matched
    researchers_mark_distinct(first_id=first.pk, second_id=second.pk, actor=curator)
    before = snapshot()
    match_papers([p.pk for p in papers])
    assert snapshot() == before
    assert Researcher.objects.filter(name_key=first.name_key, merged_into__isnull=True).count() == 2
    assert not any(c.name_key == first.name_key for c in curation_clusters())


@pytest.mark.django_db
def test_a_later_matching_run_keeps_a_moved_authorship(matched, curator):
    papers, first, second = matched
    authorship = Authorship.objects.get(paper=papers[1], position=3)
    authorship_move(authorship_id=authorship.pk, to_researcher_id=first.pk, actor=curator)
    match_papers([p.pk for p in papers])
    assert ferreira_on(papers[1]) == first.pk
    # Without the pin, the recorded S2 id would have taken it back.
    unpinned = Authorship.objects.get(paper=papers[0], position=3)
    Authorship.objects.filter(pk=unpinned.pk).update(researcher=second)
    match_papers([p.pk for p in papers])
    assert ferreira_on(papers[0]) == first.pk


@pytest.mark.django_db
def test_papers_matched_through_a_folded_id_after_the_merge_go_back_on_split(
    paper_factory, sources, clean_cache, curator
):
    first_paper, second_paper = (
        paper_factory(
            arxiv_id=arxiv_id,
            authors=BYLINE,
            categories=["astro-ph.CO"],
            published=datetime(2023, 1 + n, 1, tzinfo=UTC),
        )
        for n, arxiv_id in enumerate(["2211.11461", "2304.06333"])
    )
    match_papers([first_paper.pk])
    survivor = Researcher.objects.get(pk=ferreira_on(first_paper))
    # A record known before (created by hand here) that holds the S2 id of the second paper.
    folded = Researcher.objects.create(display_name="P. Ferreira", name_key=survivor.name_key)
    ResearcherExternalId.objects.create(researcher=folded, source="s2", value="145209584")
    entry = researchers_merge(survivor_id=survivor.pk, folded_ids=[folded.pk], actor=curator)
    match_papers([second_paper.pk])  # the folded id now leads to the survivor
    assert ferreira_on(second_paper) == survivor.pk

    split = merge_split(entry_id=entry.pk, actor=curator)
    assert split.after["papers_to_match_again"] == 1
    assert papers_to_match(limit=10) == [second_paper.pk]
    match_papers(papers_to_match(limit=10))
    assert ferreira_on(second_paper) == folded.pk
    assert ferreira_on(first_paper) == survivor.pk
