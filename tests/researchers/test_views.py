from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from researchers.models import ResearcherExternalId

# The record, its papers (2: rows and prefetch), its identity panel (source records, open
# conflicts), its public history, the same-name records and the evidence about them (6, for any
# number of homonyms): a fixed number, whatever the number of papers or homonyms.
# Two of them for researchers working on similar things: the vector index's version (none once
# its file exists), then this researcher's papers' vectors; more only when there are some.
# One more for the affiliation listed on the researcher's newest paper that lists one. Two for
# citations (OpenAlex's per year, the archive's papers citing theirs), a third when there are
# citing papers to list.
RESEARCHER_PAGE_QUERIES = 20


def jsonld_graph(html: str) -> list[dict]:
    blocks = re.findall(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)
    return json.loads(blocks[-1])["@graph"]


@pytest.fixture
def author_with_papers(paper_factory, researcher_factory, link_author):
    """A researcher matched as first author on `n` papers, newest last."""

    def make(n: int, **fields):
        researcher = researcher_factory("Dan Zhao", paper_count=n, **fields)
        papers = []
        for i in range(n):
            paper = paper_factory(
                title=f"Paper {i:02d}",
                authors=["Dan Zhao", "Someone Else"],
                categories=["cs.LG", "cs.DC"] if i % 2 else ["cs.DC"],
                published=datetime(2020, 1, 1, tzinfo=UTC).replace(
                    year=2000 + i % 25, month=1 + i // 25
                ),
                cited_by_count=i * 3 % 7,
            )
            link_author(paper, 1, researcher)
            papers.append(paper)
        return researcher, papers

    return make


def test_researcher_page_shows_stored_figures(client, author_with_papers, researcher_factory):
    researcher, papers = author_with_papers(
        3, h_index=6, citation_count=74, works_count=12, figures_source="OpenAlex"
    )
    researcher.position_counts = {"first": 3, "middle": 0, "last": 0}
    researcher.position_basis = 2
    researcher.field_counts = {"cs.DC": 3, "cs.LG": 1}
    researcher.most_cited_paper = papers[2]
    researcher.cited_papers_count = 3
    researcher.citations_here = 9
    coauthor = researcher_factory("Someone Else")
    researcher.coauthors = [
        {"id": coauthor.pk, "name": "Someone Else", "slug": coauthor.slug, "count": 3}
    ]
    researcher.save()
    ResearcherExternalId.objects.create(researcher=researcher, source="s2", value="2118")
    ResearcherExternalId.objects.create(
        researcher=researcher, source="openalex", value="A5023888391"
    )
    ResearcherExternalId.objects.create(
        researcher=researcher, source="orcid", value="https://orcid.org/0000-0002-1825-0097"
    )

    response = client.get(researcher.get_absolute_url())
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Dan Zhao</h1>" in html
    description = "Dan Zhao: 3 papers in this archive · h-index 6."
    assert f'<meta name="description" content="{description}">' in html
    for figure in (
        "<strong>3</strong> papers here",
        "<strong>6</strong> h-index",
        "<strong>74</strong> citations",
        "<strong>12</strong> works in total",
    ):
        assert figure in html
    assert "newest" in html  # the matching-order note
    assert "Counted over 2 of 3 papers" in html
    assert 'href="?category=cs.DC"' in html
    assert "Distributed, Parallel, and Cluster Computing" in html
    assert "https://www.semanticscholar.org/author/2118" in html
    assert "https://openalex.org/A5023888391" in html
    assert 'href="https://orcid.org/0000-0002-1825-0097"' in html
    assert "orcid.org/https" not in html
    assert f'<a href="{papers[2].get_absolute_url()}">Paper 02</a>' in html
    assert "9 across the 3 of their papers we have counts for" in html
    assert coauthor.get_absolute_url() in html and "<svg" in html
    assert '<div class="researcher-actions">' in html and "Sign in to follow" in html
    assert "0 followers" in html
    graph = jsonld_graph(html)
    person = next(item for item in graph if item["@type"] == "Person")
    assert person["name"] == "Dan Zhao"
    assert "https://orcid.org/0000-0002-1825-0097" in person["sameAs"]
    crumbs = next(item for item in graph if item["@type"] == "BreadcrumbList")
    assert [c["name"] for c in crumbs["itemListElement"]] == [
        "wovepaper",
        "Researchers",
        "Dan Zhao",
    ]


def test_sections_without_data_show_an_honest_empty_state(client, researcher_factory):
    researcher = researcher_factory("Nobody Yet")
    html = client.get(researcher.get_absolute_url()).content.decode()
    assert html.count("Not computed yet") == 4  # position, fields, most cited, co-authors
    assert "No papers matched to this researcher here yet." in html
    assert '<meta name="description" content="Nobody Yet: 0 papers in this archive.">' in html


def test_id_alone_and_wrong_slug_redirect(client, researcher_factory):
    researcher = researcher_factory("Biao Sun")
    for path in (f"/researchers/{researcher.pk}", f"/researchers/{researcher.pk}-someone"):
        response = client.get(path)
        assert response.status_code == 301
        assert response["Location"] == f"/researchers/{researcher.pk}-biao-sun"
    assert client.get("/researchers/999999").status_code == 404
    assert client.get("/researchers/abc").status_code == 404


def test_merged_chain_redirects_straight_to_the_final_survivor(client, researcher_factory):
    final = researcher_factory("Biao Sun")
    middle = researcher_factory("Biao Sun", merged_into=final)
    first = researcher_factory("B. Sun", merged_into=middle)
    response = client.get(f"{first.get_absolute_url()}?category=cs.DC")
    assert response.status_code == 301
    assert response["Location"] == f"{final.get_absolute_url()}?category=cs.DC"
    assert client.get(middle.get_absolute_url())["Location"] == final.get_absolute_url()


def test_merge_cycle_does_not_loop_forever(client, researcher_factory):
    a = researcher_factory("Loop A")
    b = researcher_factory("Loop B", merged_into=a)
    a.merged_into = b
    a.save()
    # A chain that does not end shows the record asked for, at its own canonical address.
    response = client.get(f"/researchers/{a.pk}")
    assert (response.status_code, response["Location"]) == (301, a.get_absolute_url())
    page = client.get(a.get_absolute_url())
    assert page.status_code == 200
    assert page.context["researcher"].pk == a.pk


def test_same_name_lists_other_live_records(client, researcher_factory):
    me = researcher_factory("Biao Sun")
    other = researcher_factory("Biao Sun", paper_count=4, h_index=53)
    merged = researcher_factory("Biao Sun", merged_into=me)
    researcher_factory("Someone Different")
    html = client.get(me.get_absolute_url()).content.decode()
    assert other.get_absolute_url() in html
    assert "4 papers here · h-index 53" in html
    assert merged.get_absolute_url() not in html
    assert "Someone Different" not in html
    assert "different people" in html


def test_category_filter_marks_the_active_field(client, author_with_papers):
    researcher, papers = author_with_papers(4)
    researcher.field_counts = {"cs.DC": 4, "cs.LG": 2}
    researcher.save()
    html = client.get(researcher.get_absolute_url() + "?category=cs.LG").content.decode()
    # Each field reads as its arXiv code, with its name on hover and for screen readers.
    assert (
        'href="?category=cs.LG" title="Machine Learning" aria-label="cs.LG: Machine Learning"'
        ' aria-current="true"><span class="mono">cs.LG</span>' in html
    )
    assert 'href="?category=cs.DC" title="Distributed, Parallel, and Cluster Computing"' in html
    titles = re.findall(r'<h3><a href="[^"]+">(Paper \d+)</a></h3>', html)
    assert sorted(titles) == ["Paper 01", "Paper 03"]


def test_paper_list_pages_24_at_a_time_newest_first(client, author_with_papers):
    researcher, papers = author_with_papers(30)
    first = client.get(researcher.get_absolute_url()).content.decode()
    titles = re.findall(r'<h3><a href="[^"]+">(Paper \d+)</a></h3>', first)
    expected = [p.title for p in sorted(papers, key=lambda p: (p.published, p.pk), reverse=True)]
    assert titles == expected[:24]
    assert 'rel="next"' in first and "Page 1 of 2" in first
    second = client.get(researcher.get_absolute_url() + "?page=2").content.decode()
    assert re.findall(r'<h3><a href="[^"]+">(Paper \d+)</a></h3>', second) == expected[24:]
    assert 'rel="prev"' in second and 'rel="next"' not in second


@pytest.mark.parametrize("sort", ["oldest", "cited"])
def test_paper_list_sorts(client, author_with_papers, sort):
    researcher, papers = author_with_papers(5)
    html = client.get(researcher.get_absolute_url() + f"?sort={sort}").content.decode()
    titles = re.findall(r'<h3><a href="[^"]+">(Paper \d+)</a></h3>', html)
    if sort == "oldest":
        expected = sorted(papers, key=lambda p: (p.published, p.pk))
    else:
        expected = sorted(
            papers, key=lambda p: (-p.cited_by_count, -p.published.timestamp(), -p.pk)
        )
    assert titles == [p.title for p in expected]


def test_markdown_variant(client, author_with_papers):
    researcher, papers = author_with_papers(2, h_index=5)
    response = client.get(researcher.get_absolute_url(), HTTP_ACCEPT="text/markdown")
    assert response["Content-Type"].startswith("text/markdown")
    body = response.content.decode()
    assert body.startswith("# Dan Zhao\n")
    assert "2 papers in this archive · h-index 5" in body
    assert f"[Paper 01](http://127.0.0.1:8000{papers[1].get_absolute_url()})" in body
    assert "## Author position" in body and "Not computed yet" in body


def test_name_with_markup_is_escaped(client, researcher_factory):
    researcher = researcher_factory("<img src=x onerror=alert(1)> O'Brien")
    html = client.get(researcher.get_absolute_url()).content.decode()
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt; O&#x27;Brien" in html
    md = client.get(researcher.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert md.startswith("# \\<img src=x onerror=alert(1)\\> O'Brien")


@pytest.mark.parametrize("n", [2, 50])
def test_researcher_page_query_bound_does_not_grow_with_papers(
    client, author_with_papers, researcher_factory, django_assert_max_num_queries, n
):
    researcher, papers = author_with_papers(n, h_index=3)
    researcher.field_counts = {"cs.DC": n}
    researcher.most_cited_paper = papers[0]
    researcher.save()
    for _ in range(3):
        researcher_factory("Dan Zhao")
    ResearcherExternalId.objects.create(researcher=researcher, source="s2", value="1")
    with django_assert_max_num_queries(RESEARCHER_PAGE_QUERIES):
        response = client.get(researcher.get_absolute_url() + "?category=cs.DC")
    assert response.status_code == 200
    assert response.content.decode().count('class="paper-item"') == min(n, 24)


def test_browse_list_excludes_merged_and_sorts(client, researcher_factory):
    big = researcher_factory("Zed Many", paper_count=40, h_index=2)
    cited = researcher_factory("Amy Cited", paper_count=3, h_index=60)
    researcher_factory("Gone Merged", paper_count=99, merged_into=big)
    researcher_factory("No Index", paper_count=1)

    def names(query=""):
        html = client.get("/researchers" + query).content.decode()
        return re.findall(r'<td><a href="/researchers/[^"]+">([^<]+)</a></td>', html)

    assert names() == ["Zed Many", "Amy Cited", "No Index"]
    assert names("?sort=h_index") == ["Amy Cited", "Zed Many"]
    assert names("?sort=name") == ["Amy Cited", "No Index", "Zed Many"]
    assert big and cited


@pytest.mark.parametrize("n", [2, 60])
def test_browse_list_pages_without_counting(
    client, researcher_factory, django_assert_max_num_queries, n
):
    for i in range(n):
        researcher_factory(f"Person {i:03d}", paper_count=i)
    with django_assert_max_num_queries(1):
        html = client.get("/researchers").content.decode()
    assert html.count("<tr><td>") == min(n, 50)
    assert ('rel="next"' in html) == (n > 50)
    md = client.get("/researchers", HTTP_ACCEPT="text/markdown").content.decode()
    assert md.startswith("# Researchers")


def test_category_filter_matches_whole_codes_only(
    client, paper_factory, researcher_factory, link_author
):
    researcher = researcher_factory("Old Timer")
    for title, categories in [
        ("Archive only", ["cond-mat"]),
        ("Subject class", ["cond-mat.str-el"]),
        ("Cross-listed", ["hep-th", "cond-mat", "quant-ph"]),
        ("Listed last", ["hep-th", "cond-mat"]),
    ]:
        link_author(paper_factory(title=title, categories=categories), 1, researcher)
    html = client.get(researcher.get_absolute_url() + "?category=cond-mat").content.decode()
    titles = re.findall(r'<h3><a href="[^"]+">([^<]+)</a></h3>', html)
    assert sorted(titles) == ["Archive only", "Cross-listed", "Listed last"]


def test_a_paper_matched_twice_to_one_person_is_listed_once(
    client, paper_factory, researcher_factory, link_author
):
    researcher = researcher_factory("Twice Listed")
    paper = paper_factory(title="Doubled", authors=["Twice Listed", "Twice Listed"])
    link_author(paper, 1, researcher)
    link_author(paper, 2, researcher)
    html = client.get(researcher.get_absolute_url()).content.decode()
    assert html.count('class="paper-item"') == 1


def test_survivor_ids_walk_every_chain_at_once(researcher_factory, django_assert_num_queries):
    from researchers.selectors import researcher_survivor_ids

    final = researcher_factory("Chain End")
    middle = researcher_factory("Chain Middle", merged_into=final)
    first = researcher_factory("Chain Start", merged_into=middle)
    alone = researcher_factory("Never Merged")
    loop_a = researcher_factory("Loop A")
    loop_b = researcher_factory("Loop B", merged_into=loop_a)
    loop_a.merged_into = loop_b
    loop_a.save()
    with django_assert_num_queries(3):  # one per hop of the longest chain, all ids together
        survivors = researcher_survivor_ids([first.pk, middle.pk, alone.pk, final.pk, 999_999])
    assert survivors == {
        first.pk: final.pk,
        middle.pk: final.pk,
        alone.pk: alone.pk,
        final.pk: final.pk,
    }  # the unknown id is left out
    assert researcher_survivor_ids([loop_a.pk]) == {}  # a chain that never ends leads nowhere


def test_fields_of_papers_without_categories_are_unknown_not_pending(
    client, paper_factory, researcher_factory, link_author
):
    from papers.models import PaperCategory
    from researchers.page_figures import researchers_update_stats

    researcher = researcher_factory("Dan Zhao")
    paper = paper_factory(authors=["Dan Zhao"])
    link_author(paper, 1, researcher)
    PaperCategory.objects.filter(paper=paper).delete()
    researchers_update_stats([researcher.pk])
    researcher.refresh_from_db()
    html = client.get(researcher.get_absolute_url()).content.decode()
    assert "Unknown: we hold no arXiv categories for this paper." in html
    markdown = client.get(researcher.get_absolute_url(), HTTP_ACCEPT="text/markdown")
    assert "Unknown: we hold no arXiv categories for this paper." in markdown.content.decode()


def test_a_researcher_page_says_where_their_newest_listed_affiliation_is(
    client, author_with_papers
):
    from institutions.models import AuthorshipInstitution, Institution
    from papers.models import Authorship

    researcher, papers = author_with_papers(3)
    old_place = Institution.objects.create(name="Old University", ror_id="00old0000")
    new_place = Institution.objects.create(name="New Institute", ror_id="00new0000")
    for paper, place in ((papers[0], old_place), (papers[2], new_place)):
        authorship = Authorship.objects.get(paper=paper, researcher=researcher)
        AuthorshipInstitution.objects.create(authorship=authorship, institution=place, paper=paper)
    html = client.get(researcher.get_absolute_url()).content.decode()
    assert "New Institute" in html and "Old University" not in html
    assert f"newest paper with an affiliation, {papers[2].published.year}" in html
    markdown = client.get(researcher.get_absolute_url(), HTTP_ACCEPT="text/markdown")
    assert "[New Institute]" in markdown.content.decode()


def test_a_researcher_without_any_listed_affiliation_shows_none(client, author_with_papers):
    researcher, _ = author_with_papers(2)
    assert (
        "newest paper with an affiliation"
        not in client.get(researcher.get_absolute_url()).content.decode()
    )


@pytest.mark.django_db
def test_researcher_page_charts_citations_per_year_and_names_citing_papers(
    client, paper_factory, researcher_factory, link_author, fixtures_dir
):
    from papers.citations.load import Coverage, citation_coverage_record, citing_works_load
    from sources.citation_answers import CitedWork, openalex_counts_by_year

    work = json.loads((fixtures_dir / "openalex" / "work_W3188841554.json").read_text())
    ada = researcher_factory("Ada Lovelace")
    theirs = paper_factory(title="Her paper", authors=["Ada Lovelace"])
    link_author(theirs, 1, ada)
    citing = paper_factory(title="A paper citing hers", authors=["Grace Hopper"])
    fetched = datetime(2026, 11, 12, tzinfo=UTC)
    citation_coverage_record(
        [
            Coverage(
                paper_id=theirs.pk,
                source="openalex",
                fetched_at=fetched,
                known=True,
                counts_by_year=openalex_counts_by_year(work),
            )
        ]
    )
    citing_works_load(
        cited_paper_id=theirs.pk,
        source="s2",
        fetched_at=fetched,
        citing_works=[CitedWork(arxiv_id=citing.arxiv_id)],
    )

    html = client.get(ada.get_absolute_url()).content.decode()
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert "Citations per year 2023 2 OpenAlex's counts for 1 of their papers (12 Nov 2026)" in text
    assert "1 paper of this archive cites their work." in text
    assert "A paper citing hers (2024) cites Her paper" in text
    md = client.get(ada.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert "## Citations per year\n\n- 2023: 2\n" in md
    assert f"cites [Her paper](http://127.0.0.1:8000{theirs.get_absolute_url()})" in md


@pytest.mark.django_db
def test_researcher_cited_by_feed_lists_papers_citing_theirs(
    client, paper_factory, researcher_factory, link_author, django_assert_max_num_queries
):
    from papers.citations.load import citing_works_load
    from sources.citation_answers import CitedWork
    from tests.feed_conformance import conforming_feed

    ada = researcher_factory("Ada Lovelace")
    first, second = (paper_factory(title=t, authors=["Ada Lovelace"]) for t in ("One", "Two"))
    for paper in (first, second):
        link_author(paper, 1, ada)
    older = paper_factory(title="Older citing", published=datetime(2023, 1, 1, tzinfo=UTC))
    newer = paper_factory(title="Newer citing", published=datetime(2025, 1, 1, tzinfo=UTC))
    fetched = datetime(2026, 11, 12, tzinfo=UTC)
    # Both cite her first paper; the newer cites her second too, and her second cites her first.
    citing_works_load(
        cited_paper_id=first.pk,
        source="s2",
        fetched_at=fetched,
        citing_works=[CitedWork(arxiv_id=p.arxiv_id) for p in (older, newer, second)],
    )
    citing_works_load(
        cited_paper_id=second.pk,
        source="s2",
        fetched_at=fetched,
        citing_works=[CitedWork(arxiv_id=newer.arxiv_id)],
    )

    with django_assert_max_num_queries(6):
        response = client.get(f"/researchers/{ada.pk}/cited-by.rss")

    feed = conforming_feed(response.content)
    assert [e.title for e in feed.entries] == ["Newer citing", "Older citing"]
    assert feed.feed.title == "wovepaper: papers citing Ada Lovelace"
    atom = conforming_feed(client.get(f"/researchers/{ada.pk}/cited-by.atom").content)
    assert [e.title for e in atom.entries] == ["Newer citing", "Older citing"]
    assert (
        f'href="/researchers/{ada.pk}/cited-by.rss"'
        in client.get(ada.get_absolute_url()).content.decode()
    )


def test_most_cited_paper_title_reads_as_every_title_does(client, author_with_papers):
    """Its title's formulas are shown as formulas (escaped text around them), as in every
    list, and one citation is "1 citation" in the markdown too."""
    researcher, papers = author_with_papers(1)
    best = papers[0]
    best.title = r"Bounds on $\alpha$ decay <b>rates</b>"
    best.cited_by_count = 1
    best.save()
    researcher.most_cited_paper = best
    researcher.cited_papers_count = 1
    researcher.citations_here = 1
    researcher.save()
    html = client.get(researcher.get_absolute_url()).content.decode()
    most_cited = html.split('class="most-cited"', 1)[1].split("</p>", 1)[0]
    assert "<math" in most_cited and "$" not in most_cited
    assert "&lt;b&gt;rates&lt;/b&gt;" in most_cited and "<b>" not in most_cited
    md = client.get(researcher.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert "): 1 citation · 1 across the 1 of their papers" in md
