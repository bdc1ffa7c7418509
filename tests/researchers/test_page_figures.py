"""Stored researcher and institution figures: values, and a bounded number of queries."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from institutions.models import Institution
from papers.models import Authorship, Paper
from researchers.matching import match_papers
from researchers.models import Researcher, ResearcherExternalId
from researchers.page_figures import researchers_update_stats
from tests.sources.conftest import recorded_s2_authors

SOMMERVILLE_PAPERS = {
    # arXiv id: (byline, categories); citation counts come from the recorded S2 papers.
    "1105.0149": (
        ["Ali Khajeh-Hosseini", "Ian Sommerville", "Jurgen Bogaerts", "Pradeep Teregowda"],
        ["cs.DC", "cs.SE"],
    ),
    "1209.5246": (["Ian Sommerville", "Russell Lock", "Tim Storer"], ["cs.SE"]),
    "1002.3492": (
        ["Ali Khajeh-Hosseini", "David Greenwood", "Ian Sommerville", "Someone Unlisted"],
        ["cs.DC"],
    ),
}


@pytest.fixture
def sommerville_papers(paper_factory, sources):
    # 1002.3492 has no recording in the fixture set: add the recorded S2 object for it.
    from tests.sources.conftest import load

    batch = load("semanticscholar/author_batch_full_fields.json")
    for author in batch:
        for paper in author["papers"]:
            if (paper.get("externalIds") or {}).get("ArXiv") == "1002.3492":
                sources.s2_papers["1002.3492"] = paper
    made = {}
    for n, (arxiv_id, (authors, categories)) in enumerate(SOMMERVILLE_PAPERS.items()):
        made[arxiv_id] = paper_factory(
            arxiv_id=arxiv_id,
            authors=authors,
            categories=categories,
            published=datetime(2012, 1, 1 + n, tzinfo=UTC),
        )
    return made


@pytest.mark.django_db
def test_stored_figures_of_a_researcher(sommerville_papers, sources, clean_cache):
    match_papers([p.pk for p in sommerville_papers.values()])
    sommerville = Researcher.objects.get(external_ids__source="s2", external_ids__value="1711844")
    cited = {a: sources.s2_papers[a]["citationCount"] for a in SOMMERVILLE_PAPERS}
    assert sommerville.paper_count == 3
    # Position counts only over papers where every author is matched: not 1002.3492.
    assert sommerville.position_basis == 2
    assert sommerville.position_counts == {"middle": 1, "first": 1}
    assert sommerville.field_counts == {"cs.DC": 2, "cs.SE": 2}
    best = max(cited, key=cited.get)
    assert sommerville.most_cited_paper == Paper.objects.get(arxiv_id=best)
    assert sommerville.cited_papers_count == 3
    assert sommerville.citations_here == sum(cited.values())
    khajeh = Researcher.objects.get(external_ids__value="1401831114")
    top = sommerville.coauthors[0]
    # Khajeh-Hosseini wrote one of Sommerville's papers with each of these co-authors: the
    # graph's edges. Each pair is kept once, on the more frequent co-author of the two.
    linked_with = {
        Researcher.objects.get(pk=other).display_name: n for other, n in top.pop("links")
    }
    assert linked_with == {"Jurgen Bogaerts": 1, "Pradeep B. Teregowda": 1, "David Greenwood": 1}
    assert top == {
        "id": khajeh.pk,
        "name": "Ali Khajeh-Hosseini",
        "slug": "ali-khajeh-hosseini",
        "count": 2,
    }
    assert {c["name"] for c in sommerville.coauthors} == {
        "Ali Khajeh-Hosseini",
        "Jurgen Bogaerts",
        "Pradeep B. Teregowda",
        "Russell Lock",
        "Tim Storer",
        "David Greenwood",
    }
    # Figures from the recorded S2 author batch, with their source.
    recorded = recorded_s2_authors()["1711844"]
    assert (sommerville.h_index, sommerville.citation_count, sommerville.works_count) == (
        recorded["hIndex"],
        recorded["citationCount"],
        recorded["paperCount"],
    )
    assert sommerville.figures_source == "s2" and sommerville.figures_updated_at
    assert sommerville.stats_updated_at is not None


@pytest.mark.django_db
def test_stats_follow_authorships_that_move(sommerville_papers, sources, clean_cache):
    match_papers([p.pk for p in sommerville_papers.values()])
    sommerville = Researcher.objects.get(external_ids__value="1711844")
    other = Researcher.objects.create(display_name="Curated Elsewhere")
    Authorship.objects.filter(researcher=sommerville, paper__arxiv_id="1209.5246").update(
        researcher=other
    )
    researchers_update_stats([sommerville.pk, other.pk])
    sommerville.refresh_from_db()
    other.refresh_from_db()
    assert (sommerville.paper_count, other.paper_count) == (2, 1)
    assert other.position_counts == {"first": 1} and other.position_basis == 1


@pytest.mark.django_db
def test_stats_queries_are_bounded_whatever_the_paper_count(
    paper_factory, django_assert_max_num_queries
):
    small = Researcher.objects.create(display_name="Ada Small")
    big = Researcher.objects.create(display_name="Bea Big")
    peers = [Researcher.objects.create(display_name=f"Peer {n}") for n in range(30)]
    for n in range(120):
        paper = paper_factory(
            authors=["Bea Big", f"Peer {n % 30}", "Ada Small" if n < 2 else "Carl Unmatched"],
            cited_by_count=n or None,
        )
        rows = list(paper.authorships.order_by("position"))
        rows[0].researcher = big
        rows[1].researcher = peers[n % 30]
        if n < 2:
            rows[2].researcher = small
        Authorship.objects.bulk_update(rows, ["researcher"])
    with django_assert_max_num_queries(6):
        researchers_update_stats([small.pk])
    with django_assert_max_num_queries(6):
        researchers_update_stats([big.pk, small.pk, *[p.pk for p in peers]])
    big.refresh_from_db()
    assert big.paper_count == 120 and big.position_counts == {"first": 2}
    assert big.position_basis == 2 and big.citations_here == sum(range(120))
    assert big.cited_papers_count == 119  # the paper without a count is not counted
    assert len(big.coauthors) == 31 and big.coauthors[0]["count"] == 4  # 30 peers and Ada


@pytest.mark.django_db
def test_institution_counts(sources, paper_factory, clean_cache):
    paper = paper_factory(
        arxiv_id="2108.04680",
        authors=[
            "Jonathan C. Roberts",
            "Joseph W. Mearman",
            "Peter W. S. Butcher",
            "Hayder M. Al-Maneea",
            "Panagiotis D. Ritsos",
        ],
    )
    match_papers([paper.pk])
    bangor = Institution.objects.get(ror_id="006jb1a24")
    assert (bangor.paper_count, bangor.researcher_count) == (1, 5)
    assert ResearcherExternalId.objects.filter(source="openalex").count() == 5
