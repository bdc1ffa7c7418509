"""No paper of the archive stays undated: a record no source dates (the demo's papers known only
from Semantic Scholar and OpenAlex, like word2vec's 1301.3781) takes the month its arXiv
identifier names, marked as a month everywhere it is shown, and every date-ordered list, feed
and export treats it as one."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import feedparser
import pytest

from papers.authors import parse_display_name
from papers.citations.export import citation_entries, csl_items, to_bibtex, to_ris
from papers.ingest.records import PaperRecord
from papers.ingest.upsert import papers_upsert
from papers.models import Paper

pytestmark = pytest.mark.django_db


def _record(arxiv_id: str, title: str, published: datetime | None = None) -> PaperRecord:
    return PaperRecord(
        arxiv_id=arxiv_id,
        title=title,
        authors_raw="Tomas Mikolov, Kai Chen",
        authors=[parse_display_name("Tomas Mikolov"), parse_display_name("Kai Chen")],
        categories=["cs.CL"],
        published=published,
    )


@pytest.fixture
def word2vec_and_an_older_dated_paper():
    papers_upsert(
        [
            _record("1301.3781", "Efficient Estimation of Word Representations in Vector Space"),
            _record("hep-th/9901001", "An old-style identifier without a date"),
            _record(
                "0805.1234",
                "A paper arXiv dated, in 2008",
                published=datetime(2008, 5, 9, tzinfo=UTC),
            ),
        ]
    )
    return Paper.objects.get(arxiv_id="1301.3781")


def test_an_undated_record_takes_its_identifiers_month_and_a_rerun_changes_nothing(
    word2vec_and_an_older_dated_paper,
):
    paper = word2vec_and_an_older_dated_paper
    assert paper.published == datetime(2013, 1, 1, tzinfo=UTC)
    assert paper.published_precision == "month" and paper.published_month_only
    old = Paper.objects.get(arxiv_id="hep-th/9901001")
    assert (old.published, old.published_precision) == (datetime(1999, 1, 1, tzinfo=UTC), "month")
    dated = Paper.objects.get(arxiv_id="0805.1234")
    assert dated.published_precision is None and dated.dated_by_arxiv
    assert list(paper.category_links.values_list("published", flat=True)) == [paper.published]
    counts, _ = papers_upsert(
        [_record("1301.3781", "Efficient Estimation of Word Representations in Vector Space")]
    )
    assert counts.unchanged == 1


def test_the_page_api_and_markdown_say_the_month_and_why(client, word2vec_and_an_older_dated_paper):
    paper = word2vec_and_an_older_dated_paper
    html = client.get(paper.get_absolute_url()).content.decode()
    assert '<time datetime="2013-01">January 2013</time>' in html
    assert "the month its arXiv identifier names; no source gives the day" in html
    md = client.get(paper.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert "- First version: January 2013 (the month its arXiv identifier names" in md
    api = client.get("/api/v1/papers/1301.3781/").json()
    assert api["published"].startswith("2013-01-01") and api["published_precision"] == "month"
    listed = client.get("/papers").content.decode()
    assert '<time datetime="2013-01"' in listed and ">Jan 2013</time>" in listed


def test_date_ordered_lists_and_feeds_hold_it_in_its_place(
    client, word2vec_and_an_older_dated_paper
):
    oldest = client.get("/api/v1/papers/", {"category": "cs.CL"}).json()["results"]
    assert [p["arxiv_id"] for p in oldest] == ["1301.3781", "0805.1234", "hep-th/9901001"]
    feed = feedparser.parse(client.get("/feeds/category/cs.CL.rss").content)
    assert [e.link.rsplit("/", 1)[1].split("-")[0] for e in feed.entries][:2] == [
        "1301.3781",
        "0805.1234",
    ]


def test_exports_carry_the_year_and_month_and_no_day(word2vec_and_an_older_dated_paper):
    entries = citation_entries([word2vec_and_an_older_dated_paper])
    bib = to_bibtex(entries)
    assert "year = {2013}" in bib and "month = jan" in bib
    assert "DA  - 2013/01//" in to_ris(entries).split("\r\n")
    (item,) = csl_items(entries)
    assert item["issued"] == {"date-parts": [[2013, 1]]}
    assert json.dumps(item)
