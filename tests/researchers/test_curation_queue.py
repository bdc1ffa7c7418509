"""The review queue: same-name clusters ranked by the evidence for and against one person."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from institutions.models import AuthorshipInstitution, Institution
from researchers.curation.decisions import researchers_mark_distinct
from researchers.curation.queue import curation_clusters
from researchers.models import IdentityConflict, ResearcherExternalId
from researchers.page_figures import researchers_update_stats


@pytest.fixture
def build(paper_factory, researcher_factory, link_author):
    """Papers by `record` (at `position`) with co-authors and an institution."""

    def papers(record, *, coauthors, categories, year, n=2, institution=None):
        made = []
        for i in range(n):
            names = [c.display_name for c in coauthors] + [record.display_name]
            paper = paper_factory(
                authors=names, categories=categories, published=datetime(year, 1 + i, 1, tzinfo=UTC)
            )
            for position, c in enumerate(coauthors, start=1):
                link_author(paper, position, c)
            link_author(paper, len(names), record)
            if institution:
                authorship = paper.authorships.get(position=len(names))
                AuthorshipInstitution.objects.create(
                    authorship=authorship, paper=paper, institution=institution
                )
            made.append(paper)
        return made

    return papers


@pytest.fixture
def clusters_world(researcher_factory, build, link_author):
    oxford = Institution.objects.create(name="University of Oxford", ror_id="052gg0110")
    bartlett = researcher_factory("Deaglan J. Bartlett")
    desmond = researcher_factory("Harry Desmond")
    # One person under two records: same co-authors, institution, field and years, and the
    # sources' disagreement recorded by matching.
    ferreira = [researcher_factory("Pedro G. Ferreira") for _ in range(2)]
    for record in ferreira:
        build(
            record,
            coauthors=[bartlett, desmond],
            categories=["astro-ph.CO"],
            year=2023,
            institution=oxford,
        )
    IdentityConflict.objects.create(
        kind=IdentityConflict.S2_SPLIT,
        researcher=ferreira[0],
        other_researcher=ferreira[1],
        s2_id="145209585",
        openalex_id="A5000000001",
    )
    # Three people with one common name: different ORCIDs, fields and years, and two of them
    # authors of one paper together.
    wang = [researcher_factory("Wei Wang") for _ in range(3)]
    other = researcher_factory("Li Zhang")
    build(wang[0], coauthors=[other], categories=["cs.CV"], year=2019)
    build(wang[1], coauthors=[other], categories=["q-bio.NC"], year=2024)
    build(wang[2], coauthors=[], categories=["hep-th"], year=2012, n=1)
    ResearcherExternalId.objects.create(
        researcher=wang[0], source="orcid", value="0000-0002-1825-0097"
    )
    ResearcherExternalId.objects.create(
        researcher=wang[1], source="orcid", value="0000-0001-5109-3700"
    )
    joint = build(wang[0], coauthors=[], categories=["cs.CV"], year=2019, n=1)[0]
    joint.authorships.create(position=2, name="Wei Wang", researcher=wang[1])
    # Two records already judged to be different people.
    liwicki = [researcher_factory("Marcus Liwicki") for _ in range(2)]
    for record in liwicki:
        build(record, coauthors=[], categories=["cs.CL"], year=2022, n=1)
    # A single record is no cluster.
    build(researcher_factory("Ada Lovelace"), coauthors=[], categories=["math.HO"], year=2020)
    researchers_update_stats(r.pk for r in [bartlett, desmond, other, *ferreira, *wang, *liwicki])
    return {"ferreira": ferreira, "wang": wang, "liwicki": liwicki}


@pytest.mark.django_db
def test_queue_ranks_clusters_by_evidence(clusters_world, curator):
    researchers_mark_distinct(
        first_id=clusters_world["liwicki"][0].pk,
        second_id=clusters_world["liwicki"][1].pk,
        actor=curator,
    )
    clusters = curation_clusters()
    assert [c.name_key for c in clusters] == ["pedro g ferreira", "wei wang"]
    top = clusters[0].pairs[0]
    assert top.conflicts == 1 and top.coauthors == ["Deaglan J. Bartlett", "Harry Desmond"]
    assert top.institutions == ["University of Oxford"] and top.fields == ["astro-ph.CO"]
    assert top.years_overlap and top.evidence_against() == []
    assert top.evidence_for()[0] == (
        "1 identity conflict(s) between the sources link them: one "
        "OpenAlex id across several Semantic Scholar ids"
    )

    wang = clusters_world["wang"]
    pairs = {(p.a, p.b): p for p in clusters[1].pairs}
    both_orcids = pairs[(wang[0].pk, wang[1].pk)]
    assert both_orcids.orcid_differs and both_orcids.same_paper == 1
    assert both_orcids.evidence_against() == [
        "different ORCIDs",
        "both are authors of 1 same paper(s)",
    ]
    assert both_orcids.score < 0
    # Their shared co-author does not outweigh the evidence against: that pair ranks last.
    assert clusters[1].pairs[-1] is both_orcids
    assert clusters[0].score > clusters[1].score


@pytest.mark.django_db
def test_queue_search_by_name_prefix(clusters_world):
    assert [c.name_key for c in curation_clusters(prefix="Wei")] == ["wei wang"]
    assert [c.name_key for c in curation_clusters(prefix="marcus")] == ["marcus liwicki"]
    assert curation_clusters(prefix="Ada") == []


@pytest.mark.django_db
def test_queue_queries_do_not_grow_with_clusters(
    clusters_world, researcher_factory, build, django_assert_max_num_queries
):
    with django_assert_max_num_queries(10):
        assert len(curation_clusters()) == 3
    for n in range(15):
        records = [researcher_factory(f"Jane Doe{n}") for _ in range(3)]
        for record in records:
            build(record, coauthors=[], categories=["cs.LG"], year=2020, n=1)
        researchers_update_stats(r.pk for r in records)
    with django_assert_max_num_queries(10):
        assert len(curation_clusters(limit=50)) == 18


@pytest.mark.django_db
def test_queue_page_shows_evidence_side_by_side(
    clusters_world, client, curator, django_assert_max_num_queries
):
    client.force_login(curator)
    # 20, and the name-variant proposals' fixed few: the window's ids, its records, and the
    # evidence of the pairs found (researchers.curation.same_person).
    with django_assert_max_num_queries(28):
        response = client.get("/admin/researchers/researcher/curation/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "shared co-authors: Deaglan J. Bartlett, Harry Desmond" in html
    assert "different ORCIDs" in html and "Not the same person" in html
    assert html.index("Pedro G. Ferreira") < html.index("Wei Wang")
