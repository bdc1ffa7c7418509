from __future__ import annotations

import re

import pytest

from researchers.institution_members import institutions_refresh

INSTITUTION_PAGE_QUERIES = 5


@pytest.fixture
def stanford(institution_factory):
    return institution_factory(
        "Stanford University",
        ror_id="00f54p054",
        openalex_id="I97018004",
        country_code="US",
        type="education",
        other_names=["Leland Stanford Junior University"],
        paper_count=2,
        researcher_count=1,
    )


def test_institution_page_shows_researchers_and_papers(
    client, stanford, paper_factory, researcher_factory, link_author, affiliate
):
    older = paper_factory(title="Older result")
    newer = paper_factory(title="Newer result", published=older.published.replace(year=2025))
    person = researcher_factory("Ada Lovelace", paper_count=2, h_index=9)
    gone = researcher_factory("Ada Lovelace", merged_into=person)
    for paper in (older, newer):
        link_author(paper, 1, person)
        affiliate(paper, 1, stanford)
    link_author(newer, 2, gone)
    affiliate(newer, 2, stanford)
    institutions_refresh([stanford.pk])

    response = client.get(stanford.get_absolute_url())
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Stanford University</h1>" in html
    assert "https://ror.org/00f54p054" in html and "Leland Stanford Junior University" in html
    assert ">US<" in html and "Education" in html
    assert html.count(f'<a href="{person.get_absolute_url()}">Ada Lovelace</a> <span') == 1
    assert "2 papers here" in html
    # The merged record is not listed among the institution's researchers (the paper list may
    # still link it: its URL redirects to the survivor).
    assert f'<a href="{gone.get_absolute_url()}">Ada Lovelace</a> <span' not in html
    titles = re.findall(r'<h3><a href="[^"]+">([^<]+)</a></h3>', html)
    assert titles == ["Newer result", "Older result"]
    assert '"@type": "Organization", "@id": "http://127.0.0.1:8000/institutions/' in html


@pytest.mark.parametrize(
    "path",
    [
        "/institutions/{pk}",
        "/institutions/{pk}-old-name",
        "/institutions/00f54p054",
        "/institutions/ror/00f54p054",
        "/institutions/https://ror.org/00f54p054",
        "/institutions/I97018004",
        "/institutions/Stanford%20University",
        "/institutions/stanford%20university",
    ],
)
def test_every_way_to_name_an_institution_redirects_to_its_page(client, stanford, path):
    response = client.get(path.format(pk=stanford.pk))
    assert response.status_code == 301
    assert response["Location"] == f"/institutions/{stanford.pk}-stanford-university"


def test_unknown_institution_is_404(client, stanford):
    assert client.get("/institutions/0abcdef12").status_code == 404
    assert client.get("/institutions/Nowhere%20College").status_code == 404
    assert client.get(f"/institutions/{stanford.pk + 100}").status_code == 404


def test_markdown_variant(client, stanford):
    response = client.get(stanford.get_absolute_url(), HTTP_ACCEPT="text/markdown")
    assert response["Content-Type"].startswith("text/markdown")
    body = response.content.decode()
    assert body.startswith("# Stanford University\n")
    assert "- ROR: https://ror.org/00f54p054" in body


@pytest.mark.parametrize("n", [2, 50])
def test_institution_page_query_bound(
    client,
    stanford,
    paper_factory,
    researcher_factory,
    link_author,
    affiliate,
    django_assert_max_num_queries,
    n,
):
    for i in range(n):
        paper = paper_factory(authors=["A Person", "B Person"])
        link_author(paper, 1, researcher_factory(f"Person {i}"))
        affiliate(paper, 1, stanford)
        affiliate(paper, 2, stanford)
    with django_assert_max_num_queries(INSTITUTION_PAGE_QUERIES):
        response = client.get(stanford.get_absolute_url())
    html = response.content.decode()
    assert html.count('class="paper-item"') == min(n, 24)
    assert ('rel="next"' in html) == (n > 24)


def test_browse_list_sorts_and_filters_by_country(client, institution_factory):
    institution_factory("Zurich Lab", country_code="CH", paper_count=50)
    institution_factory("Aachen Uni", country_code="DE", paper_count=10)
    institution_factory("Berlin Uni", country_code="DE", paper_count=30)

    def names(query=""):
        html = client.get("/institutions" + query).content.decode()
        return re.findall(r'<td><a href="/institutions/[^"]+">([^<]+)</a></td>', html)

    assert names() == ["Zurich Lab", "Berlin Uni", "Aachen Uni"]
    assert names("?sort=name") == ["Aachen Uni", "Berlin Uni", "Zurich Lab"]
    assert names("?country=de") == ["Berlin Uni", "Aachen Uni"]
    assert names("?country=not-a-code") == ["Zurich Lab", "Berlin Uni", "Aachen Uni"]
    md = client.get("/institutions?country=CH", HTTP_ACCEPT="text/markdown").content.decode()
    assert md.startswith("# Institutions in CH") and "Zurich Lab" in md and "Berlin" not in md


@pytest.mark.parametrize("n", [2, 60])
def test_browse_list_query_bound(client, institution_factory, django_assert_max_num_queries, n):
    for i in range(n):
        institution_factory(f"Institute {i:03d}", paper_count=i)
    with django_assert_max_num_queries(1):
        html = client.get("/institutions").content.decode()
    assert html.count("<tr><td>") == min(n, 50)


def test_a_funder_type_is_never_shown_as_what_the_organisation_is(client, institution_factory):
    # OpenAlex types "Google (United States)" as a funder (wovepaper/demo/recordings).
    google = institution_factory("Google (United States)", ror_id="00njsd438", type="funder")
    page = client.get(google.get_absolute_url()).content.decode()
    assert "Funder" not in page
    listing = client.get("/institutions").content.decode()
    assert "Funder" not in listing
    google.types = ["funder", "company"]
    google.save()
    assert "<dd>Company</dd>" in client.get(google.get_absolute_url()).content.decode()


def test_the_stated_count_of_researchers_is_the_list_a_reader_can_page_through(
    client,
    stanford,
    paper_factory,
    researcher_factory,
    link_author,
    affiliate,
    admin_user,
    django_capture_on_commit_callbacks,
):
    from researchers.curation.decisions import researchers_merge

    people = [researcher_factory(f"Person Number{i:02d}") for i in range(63)]
    hidden = researcher_factory("Hidden Person", hidden=True)
    for i, person in enumerate([*people, hidden]):
        paper = paper_factory(authors=[person.display_name, "Someone Else"])
        link_author(paper, 1, person)
        affiliate(paper, 1, stanford)
        affiliate(paper, 2, stanford)  # a byline matched to nobody: not a researcher
        if i < 3:  # the first three wrote two papers there
            second = paper_factory(authors=[person.display_name])
            link_author(second, 1, person)
            affiliate(second, 1, stanford)
    institutions_refresh([stanford.pk])
    stanford.refresh_from_db()
    assert stanford.researcher_count == 63  # the hidden record is not listed, nor counted

    card = client.get(stanford.get_absolute_url()).content.decode()
    assert "12 of 63, most papers here first" in card
    link = f"{stanford.get_absolute_url()}/researchers"
    assert f'<a href="{link}">all 63 researchers</a>' in card

    first = client.get(link).content.decode()
    second = client.get(link + "?page=2").content.decode()
    listed = re.findall(r'<td><a href="/researchers/(\d+)-', first + second)
    assert len(listed) == len(set(listed)) == 63
    assert str(hidden.pk) not in listed
    # Most papers there first.
    assert set(listed[:3]) == {str(p.pk) for p in people[:3]}
    assert 'rel="next"' in first and 'rel="next"' not in second
    markdown = client.get(link, HTTP_ACCEPT="text/markdown").content.decode()
    assert markdown.startswith("# Researchers of Stanford University") and "| 2 | " in markdown

    # A curator's merge moves bylines between records: the list and its count follow.
    with django_capture_on_commit_callbacks(execute=True):
        researchers_merge(survivor_id=people[0].pk, folded_ids=[people[1].pk], actor=admin_user)
    stanford.refresh_from_db()
    assert stanford.researcher_count == 62
    first = client.get(link).content.decode()
    assert f"/researchers/{people[1].pk}-" not in first


def test_the_researchers_page_of_an_unknown_institution_is_404_and_an_old_slug_redirects(
    client, stanford
):
    assert client.get(f"/institutions/{stanford.pk + 100}/researchers").status_code == 404
    old = client.get(f"/institutions/{stanford.pk}-old-name/researchers")
    assert old.status_code == 301
    assert old["Location"] == f"/institutions/{stanford.pk}-stanford-university/researchers"
