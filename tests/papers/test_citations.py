"""The citation graph's data layer on recorded Semantic Scholar and OpenAlex answers: parsing,
resolution to archive papers, and replacement on re-fetch (papers.citations.load)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime

import pytest

from papers.citations.load import (
    CitingPaperEdges,
    citations_load,
    citing_works_load,
    works_resolve,
    works_resolve_how,
)
from papers.models import Citation
from sources.citation_answers import (
    CitedWork,
    openalex_referenced_works,
    s2_citing_works,
    s2_reference_items,
    s2_reference_page,
    s2_references,
    s2_work,
    work_key,
)

FETCHED = datetime(2026, 11, 12, tzinfo=UTC)


@pytest.fixture
def s2_turing(fixtures_dir):
    """GET /paper/{DOI} of "Computing Machinery and Intelligence", with references and 1,000
    citations (recorded 2024-06)."""
    return json.loads(
        (fixtures_dir / "semanticscholar" / "paper_doi_full_fields_with_authors.json").read_text()
    )


@pytest.fixture
def s2_reference_pages(fixtures_dir):
    """Both pages of /paper/CorpusID:1033682/references with contexts and intents (2023-12)."""
    folder = fixtures_dir / "semanticscholar"
    return [
        json.loads((folder / f"paper_references_corpusid_1033682.{n}.json").read_text())
        for n in (0, 1)
    ]


@pytest.fixture
def openalex_work(fixtures_dir):
    return json.loads((fixtures_dir / "openalex" / "work_W3188841554.json").read_text())


def test_s2_references_keep_dois_and_titles_of_works_without_ids(s2_turing):
    works = s2_references(s2_turing)

    assert len(works) == 14
    hartree = next(w for w in works if w.title == "Calculating Instruments and Machines")
    assert (hartree.doi, hartree.year, hartree.citation_count) == ("10.2307/3610576", 1951, 112)
    assert hartree.s2_id == "348f436fd9a3965f5ff17db031a9f43426f89b8e"
    without_ids = [w for w in works if not (w.doi or w.arxiv_id)]
    assert len(without_ids) == 6
    assert all(work_key(w) for w in works)


def test_s2_citations_read_arxiv_ids(s2_turing):
    works = s2_citing_works(s2_turing)

    assert len(works) == 1000
    assert sum(1 for w in works if w.arxiv_id) == 243
    assert works[0].doi == "10.1109/jas.2024.124407"


def test_s2_reference_pages_read_influence_intents_and_contexts(s2_reference_pages):
    works = [w for page in s2_reference_pages for w in s2_reference_page(page)]

    assert len(works) == 156
    assert sum(1 for w in works if w.contexts) == 36
    influential = [w for w in works if w.is_influential]
    assert [(w.arxiv_id, w.title) for w in influential] == [
        ("1411.1784", "Conditional Generative Adversarial Nets")
    ]
    assert influential[0].contexts[0].startswith("Conditional GAN: Mirza and Osindero (2014)")
    scattering = next(w for w in works if w.intents)
    assert (scattering.intents, scattering.arxiv_id, scattering.doi) == (
        ["background"],
        "1809.06367",
        "10.1109/tpami.2018.2855738",
    )
    assert all(w.is_influential is False for w in works if w is not influential[0])


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda item: item.update(isInfluential="yes"), "isInfluential is not a boolean"),
        (lambda item: item.update(contexts=["a", 3]), "contexts is not a list of strings"),
        (lambda item: item["citedPaper"].update(year="2014"), "citedPaper.year is not a number"),
        (lambda item: item["citedPaper"].update(externalIds=["x"]), "externalIds is not an"),
        (lambda item: item.update(citedPaper=None), "citedPaper is not an object"),
    ],
)
def test_a_malformed_reference_item_is_set_aside_with_its_id(s2_reference_pages, change, reason):
    """Each item of the recorded second page (offset 100) with one field made malformed (the
    change written here): the other 55 are read, the changed one set aside with its id."""
    page = copy.deepcopy(s2_reference_pages[1])
    item = page["data"][2]
    paper_id = item["citedPaper"]["paperId"]
    change(item)

    works, set_aside = s2_reference_items(page)

    assert len(works) == len(page["data"]) - 1 == 55
    ((key, why, raw),) = set_aside
    assert reason in why
    # Its S2 id while the cited paper is readable, else its place in the whole list.
    assert key == (paper_id if item["citedPaper"] else "#102")
    assert raw.startswith("{")


def test_a_references_page_without_a_list_is_refused():
    with pytest.raises(ValueError):
        s2_reference_items({"offset": 0, "data": None})


def test_openalex_referenced_works_are_openalex_ids(openalex_work):
    works = openalex_referenced_works(openalex_work)

    assert len(works) == 49
    assert works[0].openalex_id == "W102557767"
    assert work_key(works[0]) == "openalex:W102557767"


def test_an_arxiv_doi_and_a_versioned_id_name_the_same_work(s2_reference_pages):
    first = s2_reference_page(s2_reference_pages[0])[0]

    assert (first.arxiv_id, first.doi) == ("2208.04425", "10.48550/arxiv.2208.04425")
    by_doi = CitedWork(doi="10.48550/arXiv.2208.04425")
    assert work_key(first) == work_key(CitedWork(arxiv_id="2208.04425")) == "arxiv:2208.04425"
    assert work_key(s2_work({"externalIds": {"ArXiv": "2208.04425v3"}})) == "arxiv:2208.04425"
    assert work_key(s2_work({"externalIds": {"DOI": by_doi.doi}})) == "arxiv:2208.04425"


def _load(paper, works, source="s2"):
    return citations_load(
        [CitingPaperEdges(citing_paper_id=paper.pk, source=source, fetched_at=FETCHED, works=works)]
    )


@pytest.mark.django_db
def test_cited_works_resolve_by_arxiv_id_doi_and_source_ids(
    paper_factory, s2_reference_pages, openalex_work
):
    citing = paper_factory()
    by_arxiv = paper_factory(arxiv_id="1411.1784")
    # The published version of 1809.06367 (TPAMI) cited by its journal DOI resolves to the
    # preprint, written here in the case arXiv metadata uses.
    by_doi = paper_factory(arxiv_id="1809.99999", doi="10.1109/TPAMI.2018.2855738")
    by_s2 = paper_factory(semantic_scholar_id="6f9d72dd797a67d0a477502a509ab29d215761ae")
    by_openalex = paper_factory(openalex_id="W102557767")
    works = [w for page in s2_reference_pages for w in s2_reference_page(page)]

    assert _load(citing, works) == 156
    assert _load(citing, openalex_referenced_works(openalex_work), source="openalex") == 49

    edges = Citation.objects.filter(citing_paper=citing)
    resolved = dict(edges.exclude(cited_paper=None).values_list("cited_key", "cited_paper_id"))
    assert resolved == {
        "arxiv:1411.1784": by_arxiv.pk,
        "arxiv:1809.99999": by_doi.pk,
        f"arxiv:{by_s2.arxiv_id}": by_s2.pk,
        f"arxiv:{by_openalex.arxiv_id}": by_openalex.pk,
    }
    influential = edges.get(cited_paper=by_arxiv)
    assert influential.is_influential is True
    assert influential.contexts[0].startswith("Conditional GAN")
    assert edges.get(cited_paper=by_openalex).is_influential is None
    assert influential.citing_published == citing.published


@pytest.mark.django_db
def test_resolution_says_which_kind_of_id_found_each_paper(paper_factory, s2_reference_pages):
    """What benchmarks/citation_resolution.py counts per kind of id: the first kind that
    matches, in the loaders' order (arXiv id, DOI, S2 id, OpenAlex id)."""
    by_arxiv = paper_factory(arxiv_id="1411.1784", semantic_scholar_id="also-matches-but-later")
    by_doi = paper_factory(arxiv_id="1809.99999", doi="10.1109/TPAMI.2018.2855738")
    by_openalex = paper_factory(openalex_id="W102557767")
    works = [
        next(
            w
            for page in s2_reference_pages
            for w in s2_reference_page(page)
            if w.arxiv_id == "1411.1784"
        ),
        CitedWork(doi="10.1109/tpami.2018.2855738", s2_id="not-held"),
        CitedWork(s2_id="also-matches-but-later"),
        CitedWork(openalex_id="W102557767"),
        CitedWork(arxiv_id="2401.00000", doi="10.1/none", title="Not in the archive"),
    ]

    assert works_resolve_how(works) == [
        (by_arxiv.pk, "1411.1784", "arxiv"),
        (by_doi.pk, "1809.99999", "doi"),
        (by_arxiv.pk, "1411.1784", "s2"),
        (by_openalex.pk, by_openalex.arxiv_id, "openalex"),
        None,
    ]
    assert works_resolve(works) == [r[:2] if r else None for r in works_resolve_how(works)]


@pytest.mark.django_db
def test_a_preprint_and_its_published_version_are_one_edge(paper_factory):
    citing = paper_factory()
    cited = paper_factory(arxiv_id="1809.06367", doi="10.1109/TPAMI.2018.2855738")

    written = _load(
        citing, [CitedWork(doi="10.1109/tpami.2018.2855738"), CitedWork(arxiv_id="1809.06367")]
    )

    assert written == 1
    assert list(Citation.objects.values_list("cited_key", "cited_paper_id")) == [
        ("arxiv:1809.06367", cited.pk)
    ]


@pytest.mark.django_db
def test_refetch_replaces_a_papers_edges_from_one_source_without_duplicates(
    paper_factory, s2_turing, openalex_work
):
    citing = paper_factory()
    other = paper_factory()
    references = s2_references(s2_turing)
    _load(citing, references)
    _load(other, references)
    _load(citing, openalex_referenced_works(openalex_work), source="openalex")

    _load(citing, references)
    assert Citation.objects.filter(citing_paper=citing, source="s2").count() == 14

    _load(citing, references[:5])
    assert Citation.objects.filter(citing_paper=citing, source="s2").count() == 5
    assert Citation.objects.filter(citing_paper=citing, source="openalex").count() == 49
    assert Citation.objects.filter(citing_paper=other).count() == 14


@pytest.mark.django_db
def test_archive_papers_among_citing_works_cite_the_paper_once(paper_factory, s2_turing):
    turing = paper_factory(arxiv_id="0000.00001", doi="10.1093/MIND/LIX.236.433")
    citing = [paper_factory(arxiv_id=a) for a in ("2405.19561", "2405.13352", "2405.13203")]
    # 2405.19561's own references from S2 already name the paper: not a second edge.
    _load(citing[0], [CitedWork(doi="10.1093/mind/lix.236.433")])

    def load():
        return citing_works_load(
            cited_paper_id=turing.pk,
            source="s2",
            fetched_at=FETCHED,
            citing_works=s2_citing_works(s2_turing),
        )

    assert load() == 2
    assert load() == 0
    edges = Citation.objects.filter(cited_paper=turing)
    assert sorted(edges.values_list("citing_paper_id", flat=True)) == sorted(p.pk for p in citing)
    assert set(edges.values_list("cited_key", flat=True)) == {"arxiv:0000.00001"}
