"""A paper's references and citing papers on its page, on their own paged pages and in their
markdown variants, from recorded Semantic Scholar and OpenAlex answers loaded as the fetch
loads them (papers.citations.load)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from papers.citations.load import (
    CitingPaperEdges,
    Coverage,
    citation_coverage_record,
    citations_load,
    citing_works_load,
)
from sources.citation_answers import (
    CitedWork,
    openalex_referenced_works,
    s2_reference_page,
    s2_references,
)

FETCHED = datetime(2026, 11, 12, tzinfo=UTC)
# References by source, coverage, citing papers by source; the first references and their
# archive papers; the first citing papers' ids, the papers and their edges; with two sources,
# the distinct count of citing papers.
CITATION_QUERIES = 9


@pytest.fixture
def turing(fixtures_dir):
    path = fixtures_dir / "semanticscholar" / "paper_doi_full_fields_with_authors.json"
    return json.loads(path.read_text())


@pytest.fixture
def openalex_work(fixtures_dir):
    return json.loads((fixtures_dir / "openalex" / "work_W3188841554.json").read_text())


def _load(paper, source, works, *, listed=None, when=FETCHED):
    citations_load([CitingPaperEdges(paper.pk, source, when, works)])
    citation_coverage_record(
        [
            Coverage(
                paper_id=paper.pk,
                source=source,
                fetched_at=when,
                known=True,
                references_listed=len(works) if listed is None else listed,
            )
        ]
    )


def _cite(citing, cited):
    """S2's list of the works citing `cited` names `citing` (by arXiv id)."""
    citing_works_load(
        cited_paper_id=cited.pk,
        source="s2",
        fetched_at=FETCHED,
        citing_works=[CitedWork(arxiv_id=citing.arxiv_id)],
    )


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


@pytest.mark.django_db
def test_paper_page_lists_references_with_their_source_and_date(
    client, paper_factory, turing, openalex_work
):
    paper = paper_factory(title="Computing Machinery and Intelligence")
    _load(paper, "s2", s2_references(turing))
    _load(paper, "openalex", openalex_referenced_works(openalex_work), when=FETCHED - timedelta(1))

    html = client.get(paper.get_absolute_url()).content.decode()
    text = _text(html)

    assert "References (14)" in text
    assert "References known from Semantic Scholar, 12 Nov 2026." in text
    assert "OpenAlex lists 49 (11 Nov 2026): the sources disagree." in text
    assert f'href="/papers/{paper.arxiv_id}/references?source=openalex"' in html
    # Newest first: the 1950s references lead, the ones with no year last.
    assert "Calculating Instruments and Machines (1951) · 112 citations" in text
    assert 'href="https://doi.org/10.2307/3610576"' in html
    assert "No paper of this archive is known to cite it yet." in text


@pytest.mark.django_db
def test_archive_papers_are_linked_both_ways_and_counted(client, paper_factory):
    cited = paper_factory(title="A cited paper", cited_by_count=40, cited_by_source="s2")
    citing = [paper_factory(title=f"Citing paper {n}") for n in range(3)]
    for paper in citing:
        _cite(paper, cited)

    text = _text(client.get(cited.get_absolute_url()).content.decode())
    assert "Cited by (40; 3 in this archive)" in text
    assert "40 is Semantic Scholar's count" in text
    assert all(f"Citing paper {n}" in text for n in range(3))

    html = client.get(citing[0].get_absolute_url()).content.decode()
    assert f'<a href="{cited.get_absolute_url()}">A cited paper</a>' in html
    assert "· in this archive" in html
    # Its own reference list was never asked for: the one edge known comes from S2's list of
    # the works citing the other paper, and the page says the list may be longer.
    assert "has not been asked for this paper's own reference list" in _text(html)


@pytest.mark.django_db
def test_a_source_listing_no_references_is_said(client, paper_factory):
    paper = paper_factory()
    _load(paper, "openalex", [])

    text = _text(client.get(paper.get_absolute_url()).content.decode())

    assert "References (0)" in text
    assert "OpenAlex lists no references for this paper (12 Nov 2026)." in text


@pytest.mark.django_db
def test_references_page_sorts_by_citations_and_pages(client, paper_factory, turing):
    paper = paper_factory()
    _load(paper, "s2", s2_references(turing))
    url = f"/papers/{paper.arxiv_id}/references"

    by_citations = _text(client.get(url, {"sort": "citations"}).content.decode())
    counts = [int(n.replace(",", "")) for n in re.findall(r"· ([\d,]+) citations?", by_citations)]
    assert counts == sorted(counts, reverse=True) and len(counts) == 8  # 6 have no count
    by_date = _text(client.get(url).content.decode())
    years = [int(y) for y in re.findall(r"\((\d{4})\)", by_date)]
    assert years == sorted(years, reverse=True)
    assert client.get(url, {"sort": "nonsense"}).status_code == 200


@pytest.mark.django_db
def test_cited_by_page_pages_fifty_at_a_time(client, paper_factory):
    cited = paper_factory()
    for n in range(53):
        _cite(paper_factory(title=f"Citing number {n}"), cited)
    url = f"/papers/{cited.arxiv_id}/cited-by"

    first = _text(client.get(url).content.decode())
    second = _text(client.get(url, {"page": 2}).content.decode())

    assert first.count("Citing number") == 50 and second.count("Citing number") == 3
    assert "Cited by (53 in this archive)" in first
    assert client.get("/papers/2401.99999/cited-by").status_code == 404


@pytest.mark.django_db
def test_markdown_variants_list_the_same(client, paper_factory, turing):
    cited = paper_factory(title="The cited one")
    paper = paper_factory(title="The citing one")
    _load(paper, "s2", [*s2_references(turing), CitedWork(arxiv_id=cited.arxiv_id, year=2024)])

    md = client.get(paper.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert "## References (15)" in md
    assert "References known from Semantic Scholar, 12 Nov 2026." in md
    assert (
        f"[The cited one](http://127.0.0.1:8000{cited.get_absolute_url()}) (in this archive)" in md
    )
    listed = client.get(
        f"/papers/{paper.arxiv_id}/references", HTTP_ACCEPT="text/markdown"
    ).content.decode()
    assert listed.startswith("# References (15) of The citing one")
    assert (
        "[Calculating Instruments and Machines](https://doi.org/10.2307/3610576) (1951)" in listed
    )
    cited_md = client.get(
        f"/papers/{cited.arxiv_id}/cited-by", HTTP_ACCEPT="text/markdown"
    ).content.decode()
    assert "Cited by (1 in this archive)" in cited_md and "[The citing one](" in cited_md


@pytest.mark.django_db
def test_jsonld_names_the_references_shown(client, paper_factory, turing):
    cited = paper_factory(title="The cited one")
    paper = paper_factory()
    _load(paper, "s2", [*s2_references(turing), CitedWork(arxiv_id=cited.arxiv_id, year=2099)])

    html = client.get(paper.get_absolute_url()).content.decode()
    blocks = re.findall(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)
    graph = json.loads(blocks[-1])["@graph"]
    article = next(item for item in graph if item["@type"] == "ScholarlyArticle")
    cited_jsonld = article["citation"]
    assert len(cited_jsonld) == 10
    assert cited_jsonld[0] == {
        "@type": "ScholarlyArticle",
        "name": "The cited one",
        "url": f"http://127.0.0.1:8000{cited.get_absolute_url()}",
    }
    assert {
        "@type": "CreativeWork",
        "name": "Calculating Instruments and Machines",
        "sameAs": "https://doi.org/10.2307/3610576",
    } in cited_jsonld


@pytest.mark.django_db
@pytest.mark.parametrize("citing_count", [2, 120])
def test_paper_page_queries_do_not_grow_with_citations(
    client, paper_factory, turing, openalex_work, django_assert_max_num_queries, citing_count
):
    from tests.papers.test_views import PAPER_PAGE_QUERIES

    paper = paper_factory()
    _load(paper, "s2", s2_references(turing))
    _load(paper, "openalex", openalex_referenced_works(openalex_work))
    for _ in range(citing_count):
        citing = paper_factory()
        _cite(citing, paper)
        citations_load(
            [CitingPaperEdges(citing.pk, "openalex", FETCHED, [CitedWork(arxiv_id=paper.arxiv_id)])]
        )
    client.get(paper.get_absolute_url())  # the first view makes the computed analysis
    # The lists on the page, and "related by citations": the edges to its references, its
    # citing papers, their references, the related papers.
    with django_assert_max_num_queries(PAPER_PAGE_QUERIES + CITATION_QUERIES - 3 + 4):
        response = client.get(paper.get_absolute_url())
    assert "in this archive)" in _text(response.content.decode())
    for path in ("references", "cited-by"):
        with django_assert_max_num_queries(CITATION_QUERIES):
            assert client.get(f"/papers/{paper.arxiv_id}/{path}").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("extension", ["rss", "atom"])
def test_citing_papers_feed_lists_the_newest_first(
    client, paper_factory, extension, django_assert_max_num_queries
):
    from tests.feed_conformance import conforming_feed

    cited = paper_factory(title="A much cited & <odd> paper")
    older = paper_factory(title="Older citing", published=datetime(2023, 1, 1, tzinfo=UTC))
    newer = paper_factory(title="Newer citing", published=datetime(2025, 1, 1, tzinfo=UTC))
    for paper in (older, newer):
        _cite(paper, cited)
    paper_factory(title="Not citing")

    # The paper, the citing papers' ids, those papers and their bylines, the site.
    with django_assert_max_num_queries(5):
        response = client.get(f"/papers/{cited.arxiv_id}/cited-by.{extension}")

    feed = conforming_feed(response.content)
    assert [e.title for e in feed.entries] == ["Newer citing", "Older citing"]
    assert feed.feed.title == "wovepaper: papers citing “A much cited & <odd> paper”"
    assert client.get(f"/papers/2401.99999/cited-by.{extension}").status_code == 404
    page = client.get(cited.get_absolute_url()).content.decode()
    assert f'href="/papers/{cited.arxiv_id}/cited-by.rss"' in page


@pytest.mark.django_db
def test_related_by_citations_says_why(client, paper_factory):
    paper, twin, a, b, c = (paper_factory(title=t) for t in ("P", "Twin", "A", "B", "C"))
    for citing in (paper, twin):
        citations_load(
            [
                CitingPaperEdges(
                    citing.pk, "s2", FETCHED, [CitedWork(arxiv_id=x.arxiv_id) for x in (a, b)]
                )
            ]
        )
    # Two papers cite both P and C: C is cited together with P twice.
    for n in range(2):
        reader = paper_factory(title=f"Reader {n}")
        citations_load(
            [
                CitingPaperEdges(
                    reader.pk,
                    "openalex",
                    FETCHED,
                    [CitedWork(arxiv_id=x.arxiv_id) for x in (paper, c)],
                )
            ]
        )
    lone = paper_factory(title="Lone")  # shares one reference only: not related enough
    citations_load([CitingPaperEdges(lone.pk, "s2", FETCHED, [CitedWork(arxiv_id=a.arxiv_id)])])

    html = client.get(paper.get_absolute_url()).content.decode()
    related = html.split('id="related-citations-h"')[1].split("</section>")[0]

    items = re.findall(
        r"<li><a [^>]*>([^<]+)</a>.*?<span class=\"small muted\">([^<]+)</span>", related
    )
    assert items == [
        ("Twin", "Cites 2 of the same papers of this archive"),
        ("C", "Cited together with it by 2 papers"),
    ]
    md = client.get(paper.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert "## Related by citations" in md and "Cited together with it by 2 papers" in md


@pytest.mark.django_db
def test_references_outside_the_archive_count_towards_related_by_citations(
    client, paper_factory, turing
):
    # Works outside the archive from the recorded list of Turing's references, by their DOIs.
    outside = [w for w in s2_references(turing) if w.doi and not w.arxiv_id][:3]
    assert len(outside) == 3
    inside = paper_factory(title="Inside")
    paper, cousin, mixed, lone = (paper_factory(title=t) for t in ("P", "Cousin", "Mixed", "Lone"))
    _load(paper, "s2", [*outside, CitedWork(arxiv_id=inside.arxiv_id)])
    _load(cousin, "s2", outside[:2])  # two of the same works, both outside
    _load(mixed, "s2", [outside[2], CitedWork(arxiv_id=inside.arxiv_id)])
    _load(lone, "s2", outside[:1])  # one shared work: not related enough

    html = client.get(paper.get_absolute_url()).content.decode()
    related = html.split('id="related-citations-h"')[1].split("</section>")[0]

    items = re.findall(
        r"<li><a [^>]*>([^<]+)</a>.*?<span class=\"small muted\">([^<]+)</span>", related
    )
    assert items == [
        ("Cousin", "Cites 2 of the same works outside this archive"),
        ("Mixed", "Cites 2 of the same works (1 of this archive)"),
    ]


@pytest.mark.django_db
def test_influence_and_contexts_from_the_references_endpoint_show_everywhere(
    client, paper_factory, fixtures_dir
):
    """The references endpoint's recorded pages (CorpusID:1033682), written as the fetch
    writes them: the one influential reference, Mirza and Osindero's conditional GAN (an
    archive paper here), is marked with its citing sentences on the list page, in its
    markdown and in the API."""
    pages = [
        json.loads((fixtures_dir / "semanticscholar" / name).read_text())
        for name in (
            "paper_references_corpusid_1033682.0.json",
            "paper_references_corpusid_1033682.1.json",
        )
    ]
    cgan = paper_factory(arxiv_id="1411.1784", title="Conditional Generative Adversarial Nets")
    paper = paper_factory(title="The citing one")
    _load(paper, "s2", [w for page in pages for w in s2_reference_page(page)])
    context = next(
        item["contexts"][0]
        for item in pages[1]["data"]
        if (item["citedPaper"]["externalIds"] or {}).get("ArXiv") == "1411.1784"
    )

    html = _text(client.get(f"/papers/{paper.arxiv_id}/references?sort=citations").content.decode())
    assert f"{cgan.title} · in this archive (2014) · 8,598 citations · influential" in html
    assert f"“{context}”" in html.replace("&quot;", '"')
    assert html.count("· influential") == 1

    md = client.get(
        f"/papers/{paper.arxiv_id}/references?sort=citations", HTTP_ACCEPT="text/markdown"
    ).content.decode()
    assert "(in this archive) (2014), 8598 citations, influential" in md
    assert md.count(", influential") == 1

    items = []
    url = f"/api/v1/papers/{paper.arxiv_id}/references/"
    while url:
        answer = client.get(url).json()
        items += answer["results"]
        url = answer["next"]
    assert len(items) == 156
    (influential,) = [i for i in items if i["is_influential"]]
    assert influential["intents"] == [] and context in influential["contexts"]
    assert sum(1 for i in items if i["contexts"]) == 36
    assert {i["is_influential"] for i in items} == {True, False}
