from __future__ import annotations

import html
from datetime import UTC, datetime

import feedparser
import pytest

from researchers.models import Researcher

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
    feed = feedparser.parse(response.content)
    assert not feed.bozo, feed.bozo_exception
    return feed


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
