from __future__ import annotations

import html
from datetime import UTC, datetime

import pytest

from researchers.models import Researcher
from tests.feed_conformance import conforming_feed

pytestmark = pytest.mark.django_db


@pytest.fixture
def feed_papers(paper_factory):
    tricky = paper_factory(
        title="On $\\alpha$ < 1 & the <b>bold</b> \x0bclaim",
        abstract="We show that $x < y$ & that </description> cannot break a feed.",
        categories=["hep-th", "gr-qc"],
        authors=["Paul Erdős", "Émilie du Châtelet"],
        published=datetime(2024, 6, 2, tzinfo=UTC),
    )
    older = paper_factory(categories=["cs.LG"], published=datetime(2024, 6, 1, tzinfo=UTC))
    return tricky, older


def parse(response):
    assert response.status_code == 200
    return conforming_feed(response.content)


@pytest.mark.parametrize(
    "url, version", [("/feeds/latest.rss", "rss20"), ("/feeds/latest.atom", "atom10")]
)
def test_latest_feed_validates_and_escapes_text(client, feed_papers, url, version):
    tricky, older = feed_papers
    feed = parse(client.get(url))
    assert feed.version == version
    assert [e.link for e in feed.entries] == [
        f"http://127.0.0.1:8000{tricky.get_absolute_url()}",
        f"http://127.0.0.1:8000{older.get_absolute_url()}",
    ]
    first = feed.entries[0]
    assert first.title == "On $\\alpha$ < 1 & the <b>bold</b> claim"
    # The summary is HTML that shows the abstract as written: no markup gets through.
    assert "<" not in first.summary
    assert html.unescape(first.summary) == tricky.abstract
    assert first.author == "Paul Erdős, Émilie du Châtelet"
    assert [t.term for t in first.tags] == ["hep-th", "gr-qc"]


def test_category_feed_lists_cross_listed_papers(client, feed_papers):
    tricky, older = feed_papers
    feed = parse(client.get("/feeds/category/gr-qc.rss"))
    assert [e.link.rsplit("/", 1)[1] for e in feed.entries] == [tricky.url_slug]
    feed = parse(client.get("/feeds/category/cs.LG.atom"))
    assert feed.version == "atom10" and len(feed.entries) == 1
    assert client.get("/feeds/category/no.SUCH.rss").status_code == 404
    assert client.get("/feeds/category/nothing.rss").status_code == 404


def test_researcher_feed_and_merged_redirect(client, feed_papers):
    tricky, older = feed_papers
    survivor = Researcher.objects.create(display_name="Paul Erdős", name_key="paul erdos")
    merged = Researcher.objects.create(display_name="P. Erdős", merged_into=survivor)
    authorship = tricky.authorships.get(position=1)
    authorship.researcher = survivor
    authorship.save()
    feed = parse(client.get(f"/researchers/{survivor.pk}/feed.rss"))
    assert feed.feed.title == "wovepaper: papers by Paul Erdős"
    assert [e.link for e in feed.entries] == [f"http://127.0.0.1:8000{tricky.get_absolute_url()}"]
    response = client.get(f"/researchers/{merged.pk}/feed.atom")
    assert response.status_code == 301
    assert response["Location"] == f"/researchers/{survivor.pk}/feed.atom"
    assert client.get(f"/researchers/{survivor.pk + 100}/feed.rss").status_code == 404


def test_feed_query_count_is_bounded(client, paper_factory, django_assert_max_num_queries):
    for _ in range(60):
        paper_factory()
    client.get("/feeds/latest.rss")  # the Site row is cached after the first request
    with django_assert_max_num_queries(3):
        feed = parse(client.get("/feeds/latest.rss"))
    assert len(feed.entries) == 50


def test_the_conformance_check_can_fail():
    atom = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>https://x.example/</id>
<updated>2024-01-01T00:00:00Z</updated><entry><title>e</title><id>wovepaper-alert-7</id>
<updated>2024-01-01T00:00:00Z</updated></entry></feed>"""
    with pytest.raises(AssertionError, match="not an IRI"):
        conforming_feed(atom)
    rss = b"""<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>t</title>
<link>https://x.example/</link><description>d</description><item><title>e</title>
<link>https://x.example/1</link></item></channel></rss>"""
    with pytest.raises(AssertionError, match="without guid"):
        conforming_feed(rss)


@pytest.mark.parametrize("extension", ["rss", "atom"])
def test_every_public_feed_conforms_with_math_accents_and_special_characters(
    client, feed_papers, paper_factory, extension
):
    from institutions.models import AuthorshipInstitution, Institution
    from papers.citations.load import citing_works_load
    from sources.citation_answers import CitedWork

    tricky, older = feed_papers
    math = paper_factory(
        title=r"The $(\GL_n(\D),\GL_n(E))$ pairs of {\beta} Pictoris b & 1.265 {\mu}m",
        abstract=r"Erdős's $\alpha$ < 1 & z~0.45 #1, 50% of ]]> and \x0b.",
        categories=["hep-th"],
        authors=["Paul Erdős", "Émilie du Châtelet"],
        published=None,
    )
    researcher = Researcher.objects.create(display_name="Paul Erdős", name_key="paul erdos")
    institution = Institution.objects.create(name="Université Paris-Saclay & <CNRS>")
    for paper in (tricky, math):
        AuthorshipInstitution.objects.create(
            authorship=paper.authorships.get(position=1), institution=institution, paper=paper
        )
    citing_works_load(
        cited_paper_id=older.pk,
        source="s2",
        fetched_at=datetime(2026, 11, 12, tzinfo=UTC),
        citing_works=[CitedWork(arxiv_id=p.arxiv_id) for p in (tricky, math)],
    )
    # Her paper, cited by the two others.
    older.authorships.filter(position=1).update(researcher=researcher)
    urls = [
        f"/feeds/latest.{extension}",
        f"/feeds/category/hep-th.{extension}",
        f"/researchers/{researcher.pk}/feed.{extension}",
        f"/institutions/{institution.pk}/feed.{extension}",
        f"/papers/{older.arxiv_id}/cited-by.{extension}",
        f"/researchers/{researcher.pk}/cited-by.{extension}",
    ]
    for url in urls:
        feed = parse(client.get(url))
        assert feed.entries, url
