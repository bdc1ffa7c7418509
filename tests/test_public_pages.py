"""The public pages' reading aids: newest papers, category pages, search that leads with what
matched, feeds linked from the pages, sources named, and the admin's labels."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.utils import timezone

from papers.models import Authorship
from researchers.models import Researcher, ResearcherExternalId
from researchers.names import name_key
from researchers.page_figures import researchers_update_stats

pytestmark = pytest.mark.django_db


def researcher(name: str, **fields) -> Researcher:
    return Researcher.objects.create(display_name=name, name_key=name_key(name), **fields)


def match(paper, position: int, person: Researcher) -> None:
    Authorship.objects.filter(paper=paper, position=position).update(researcher=person)


def titles(html: str) -> list[str]:
    return re.findall(r'<h3><a href="/papers/[^"]+">([^<]+)</a></h3>', html)


def test_papers_lists_the_newest_first(client, paper_factory):
    for day in (3, 1, 2):
        paper_factory(title=f"Day {day}", published=datetime(2025, 1, day, tzinfo=UTC))
    html = client.get("/papers").content.decode()
    assert titles(html) == ["Day 3", "Day 2", "Day 1"]
    assert '<a href="/papers">Papers</a>' in html  # in the site navigation


def test_category_page_lists_newest_papers_active_researchers_and_its_feed(
    client, paper_factory, django_assert_max_num_queries
):
    ada = researcher("Ada Lovelace", h_index=9)
    for day in range(1, 4):
        paper = paper_factory(
            title=f"Learning {day}",
            categories=["cs.LG"],
            published=datetime(2025, 2, day, tzinfo=UTC),
        )
        match(paper, 1, ada)
    paper_factory(title="Elsewhere", categories=["math.CO"])
    with django_assert_max_num_queries(8):
        response = client.get("/categories/cs.LG")
    html = response.content.decode()
    assert titles(html) == ["Learning 3", "Learning 2", "Learning 1"]
    assert "<h1>Machine Learning</h1>" in html
    active = html[html.index('id="active-h"') :]
    assert "Ada Lovelace" in active and "3 of these papers" in active
    assert (
        '<link rel="alternate" type="application/rss+xml" title="wovepaper: newest in cs.LG"'
        ' href="/feeds/category/cs.LG.rss">' in html
    )
    # Category labels on paper lists lead here, with the name on hover.
    listed = client.get("/papers").content.decode()
    assert (
        '<a class="cat primary" href="/categories/cs.LG" title="Machine Learning"'
        ' aria-label="cs.LG: Machine Learning">cs.LG</a>' in listed
    )


def test_unknown_category_is_not_found(client):
    assert client.get("/categories/zz.QQ").status_code == 404


def test_search_leads_with_researchers_when_no_paper_matches(client, paper_factory):
    paper_factory(title="Unrelated topology")
    researcher("Wilhelmina Quaternion", paper_count=4)
    html = client.get("/search", {"q": "quaternion"}).content.decode()
    results = html[html.index('id="results"') :]
    # A family name: the person's card leads (tests/search/test_people_lead.py).
    assert "A researcher named “quaternion”" in results
    assert results.index("Wilhelmina Quaternion") < results.index("No papers matching")


def test_search_leads_with_names_that_are_not_a_person_when_no_paper_matches(client, paper_factory):
    paper_factory(title="Unrelated topology")
    researcher("Wilhelmina Quaternionic", paper_count=4)
    html = client.get("/search", {"q": "quaternion"}).content.decode()
    results = html[html.index('id="results"') :]
    assert "Researchers matching “quaternion”" in results and "person-card" not in results
    assert results.index("Wilhelmina Quaternionic") < results.index("No papers matching")


def test_search_leads_with_papers_when_papers_match(client, paper_factory):
    paper_factory(title="Quaternion algebras")
    researcher("Wilhelmina Quaternion", paper_count=4)
    html = client.get("/search", {"q": "quaternion"}).content.decode()
    assert "1 paper contains the word “quaternion”" in html
    assert titles(html) == ["Quaternion algebras"]


def test_researcher_page_links_its_feed_and_names_its_sources(client, paper_factory):
    ada = researcher(
        "Ada Lovelace", h_index=9, figures_source="s2", figures_updated_at=timezone.now()
    )
    ResearcherExternalId.objects.create(researcher=ada, source="s2", value="1741101")
    html = client.get(ada.get_absolute_url()).content.decode()
    assert (
        f'<link rel="alternate" type="application/rss+xml" title="wovepaper: papers by Ada'
        f' Lovelace" href="/researchers/{ada.pk}/feed.rss">' in html
    )
    assert (
        'from <a href="https://www.semanticscholar.org/author/1741101" rel="noopener">'
        "Semantic Scholar</a>" in html
    )
    assert "from s2" not in html


def test_paper_citations_carry_their_source_and_date(client, paper_factory):
    paper = paper_factory(
        cited_by_count=12,
        cited_by_source="openalex",
        cited_by_updated_at=datetime(2026, 11, 2, tzinfo=UTC),
        openalex_id="W3188841554",
    )
    html = client.get(paper.get_absolute_url()).content.decode()
    assert (
        '12 <span class="small muted">from <a href="https://openalex.org/W3188841554"'
        ' rel="noopener">OpenAlex</a>, as of 2 Nov 2026' in html
    )
    listed = client.get("/papers").content.decode()
    assert '<span title="from OpenAlex, as of 2 Nov 2026">12 citations</span>' in listed


def test_markdown_coauthor_links_carry_the_id_once(client, paper_factory):
    ada, alan = researcher("Ada Lovelace"), researcher("Alan Turing")
    paper = paper_factory(authors=["Ada Lovelace", "Alan Turing"])
    match(paper, 1, ada)
    match(paper, 2, alan)
    researchers_update_stats([ada.pk])
    text = client.get(ada.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert (
        f"[Alan Turing](http://127.0.0.1:8000/researchers/{alan.pk}-alan-turing): 1 shared paper\n"
        in text
    )
    html = client.get(ada.get_absolute_url()).content.decode()
    assert f'href="/researchers/{alan.pk}-alan-turing"' in html
    assert f"/researchers/{alan.pk}-{alan.pk}-" not in html


def test_coauthor_entries_stored_before_the_fix_still_link_once(client):
    ada, alan = researcher("Ada Lovelace"), researcher("Alan Turing")
    ada.coauthors = [
        {"id": alan.pk, "name": "Alan Turing", "slug": f"{alan.pk}-alan-turing", "count": 2}
    ]
    ada.save()
    html = client.get(ada.get_absolute_url()).content.decode()
    assert f'href="/researchers/{alan.pk}-alan-turing"' in html
    assert f"/researchers/{alan.pk}-{alan.pk}-" not in html


def test_admin_reads_paper_categories_and_one_accounts_section(admin_client):
    html = admin_client.get("/admin/").content.decode()
    assert "Paper categories" in html and "Paper categorys" not in html
    sections = re.findall(r"<caption>\s*<a [^>]*>([^<]+)</a>", html)
    assert sections.count("Accounts") == 1, sections


def test_the_site_claims_no_more_papers_than_it_holds(client, paper_factory):
    # A deployment (the demo's 3,553 papers, a backfill in progress) holds part of arXiv: the
    # words say what it does, the counts say how many.
    paper_factory()
    home = client.get("/").content.decode()
    assert re.search(r"<strong>1</strong> paper</li>", home), "the home page counts what it holds"
    assert "- Papers: about 1\n" in client.get("/", HTTP_ACCEPT="text/markdown").content.decode()
    about = client.get("/about").content.decode()
    assert "the counts on the home page say how many" in about
    for path in ("/", "/about"):
        for accept in ("text/html", "text/markdown"):
            assert (
                "every paper on arXiv" not in client.get(path, HTTP_ACCEPT=accept).content.decode()
            )
