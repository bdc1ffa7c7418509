"""Words that name a person lead the search page with that person's records, a card each with
what tells same-name records apart; a given name finds its initial."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from institutions.models import AuthorshipInstitution, Institution
from researchers.models import ResearcherExternalId
from tests.test_site import SEARCH_QUERIES
from wovepaper.views import SIDE_RESULTS

pytestmark = pytest.mark.django_db


def _cards(html: str) -> list[str]:
    return re.findall(r'<li class="card person-card">(.*?)</li>', html, re.S)


@pytest.fixture
def two_radfords(paper_factory, researcher_factory, link_author):
    vision = researcher_factory("Alec Radford", paper_count=2, field_counts={"cs.CV": 2})
    language = researcher_factory("Alec Radford", paper_count=1, field_counts={"cs.CL": 1})
    ResearcherExternalId.objects.create(researcher=vision, source="s2", value="38909097")
    ResearcherExternalId.objects.create(researcher=language, source="openalex", value="A5108093")
    lab = Institution.objects.create(name="OpenAI", country_code="US")
    for year in (2015, 2016):
        paper = paper_factory(
            authors=["Alec Radford", "Luke Metz"],
            categories=["cs.CV"],
            published=datetime(year, 11, 19, tzinfo=UTC),
        )
        link_author(paper, 1, vision)
    newest = paper.authorships.get(position=1)
    AuthorshipInstitution.objects.create(authorship=newest, institution=lab, paper=paper)
    paper = paper_factory(
        authors=["Alec Radford"], categories=["cs.CL"], published=datetime(2019, 2, 14, tzinfo=UTC)
    )
    link_author(paper, 1, language)
    return vision, language


def test_a_family_name_leads_with_a_card_per_record(engine, client, two_radfords):
    engine()
    html = client.get("/search", {"q": "Radford"}).content.decode()
    assert "2 researcher records named “Radford”" in html
    cards = _cards(html)
    assert len(cards) == 2
    vision, language = cards
    assert "2015–2016" in vision and "OpenAI" in vision and "(2016)" in vision
    assert "Computer Vision" in vision and "From Semantic Scholar" in vision
    assert "1 paper here · 2019</p>" in language and "Affiliation unknown" in language
    assert "Computation and Language" in language and "From OpenAlex" in language
    # The side card no longer lists the same records again.
    assert "<h2>Researchers</h2>" not in html
    # The people come before the papers, on every width (one column on phones).
    assert html.index("people-h") < html.index('id="res-h"')


def test_a_given_name_finds_the_initial_of_a_byline(engine, client, researcher_factory):
    researcher_factory("I. Sommerville", paper_count=16)
    engine()
    html = client.get("/search", {"q": "Ian Sommerville"}).content.decode()
    cards = _cards(html)
    assert len(cards) == 1 and "I. Sommerville" in cards[0]
    assert "From arXiv bylines only" in cards[0] and "Fields unknown" in cards[0]


def test_words_that_only_begin_a_name_do_not_lead(engine, client, researcher_factory):
    researcher_factory("Hans Graphson", paper_count=3)
    engine()
    html = client.get("/search", {"q": "graph"}).content.decode()
    assert _cards(html) == []
    assert "Hans Graphson" in html  # still beside the papers


# The search page's own queries (tests/test_site.py), then the cards: the records with their
# fields, their sources, years and institutions (three), and one latest affiliation a card.
PEOPLE_QUERIES = SEARCH_QUERIES + 1 + 3 + SIDE_RESULTS


@pytest.mark.parametrize("n", [1, 8])
def test_the_cards_cost_a_bounded_number_of_queries(
    client, paper_factory, researcher_factory, link_author, django_assert_max_num_queries, n
):
    for i in range(n):
        record = researcher_factory("Grace Hopper", paper_count=i + 1)
        link_author(paper_factory(authors=["Grace Hopper"]), 1, record)
    with django_assert_max_num_queries(PEOPLE_QUERIES):
        html = client.get("/search", {"q": "Hopper"}).content.decode()
    assert len(_cards(html)) == min(n, SIDE_RESULTS)


def test_the_markdown_variant_names_the_people_too(engine, client, two_radfords):
    engine()
    md = client.get("/search", {"q": "Radford"}, HTTP_ACCEPT="text/markdown").content.decode()
    people = md[md.index("## Researchers named Radford") : md.index("## Papers")]
    assert people.count("- [Alec Radford]") == 2
    assert "2 papers here, 2015–2016; OpenAI (2016); Computer Vision" in people
    assert "affiliation unknown; Computation and Language; from OpenAlex" in people
