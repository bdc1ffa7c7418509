"""The /following feed: only followed researchers' papers, newest first, paged, bounded."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from accounts.follows import researcher_follow
from papers.models import Authorship

pytestmark = pytest.mark.django_db


def test_feed_is_newest_first_and_paged(client, user_factory, researcher_factory, authored_paper):
    user = user_factory()
    a, b = researcher_factory("Ada Lovelace"), researcher_factory("Alan Turing")
    start = datetime(2025, 1, 1, tzinfo=UTC)
    papers = []
    for i in range(25):
        paper = authored_paper(
            a if i % 2 else b, title=f"Paper number {i:02d}", published=start + timedelta(days=i)
        )
        papers.append(paper)
    # A paper with both followed researchers on it appears once.
    Authorship.objects.filter(paper=papers[24], position=2).update(researcher=a)
    researcher_follow(user=user, researcher=a)
    researcher_follow(user=user, researcher=b)
    client.force_login(user)

    first = client.get("/following")
    html = first.content.decode()
    assert "25 papers" in html
    assert html.count('class="paper-item"') == 20
    assert html.index("Paper number 24") < html.index("Paper number 23")
    assert html.count("Paper number 24") == 1
    second = client.get("/following", {"page": 2}).content.decode()
    assert second.count('class="paper-item"') == 5
    assert "Paper number 00" in second and "Paper number 24" not in second


def test_feed_reads_through_merges(client, user_factory, researcher_factory, authored_paper):
    user = user_factory()
    old = researcher_factory("Dan Zhao")
    researcher_follow(user=user, researcher=old)
    survivor = researcher_factory("Dan Zhao")
    old.merged_into = survivor  # merged after the follow was made; papers moved to the survivor
    old.save()
    authored_paper(survivor, title="Written after the merge")
    client.force_login(user)
    assert "Written after the merge" in client.get("/following").content.decode()


def test_feed_query_count_does_not_grow(
    client, user_factory, researcher_factory, authored_paper, django_assert_max_num_queries
):
    user = user_factory()
    for i in range(30):
        researcher = researcher_factory(f"Researcher {i}")
        researcher_follow(user=user, researcher=researcher)
        authored_paper(researcher)
        authored_paper(researcher)
    client.force_login(user)
    # session, user, onboarding check, follows, merges, followed institutions, count, page,
    # bylines, sidebar, the saved searches' newest alerts; and "more like the researchers you
    # follow": the vector index's version once and, not cached yet, the vectors of each of the
    # five most recently followed; the newest papers citing theirs (one query when there are
    # none, three when there are); the reader's lists, for papers like their library (none);
    # the news of papers they saved or follow
    with django_assert_max_num_queries(20):
        response = client.get("/following")
    assert response.content.decode().count('class="paper-item"') == 20


def test_feed_without_follows_invites_to_follow(client, user_factory):
    client.force_login(user_factory())
    html = client.get("/following").content.decode()
    assert "Find researchers to follow" in html


def test_feed_in_markdown(client, user_factory, researcher_factory, authored_paper):
    user = user_factory()
    researcher = researcher_factory("Ada Lovelace")
    authored_paper(researcher, title="Notes on the analytical engine")
    researcher_follow(user=user, researcher=researcher)
    client.force_login(user)
    response = client.get("/following", HTTP_ACCEPT="text/markdown")
    assert response["Content-Type"].startswith("text/markdown")
    assert "Notes on the analytical engine" in response.content.decode()


def test_feed_paging_stops_at_the_cap(
    client, user_factory, researcher_factory, authored_paper, monkeypatch
):
    from accounts import feed_views

    monkeypatch.setattr(feed_views, "FEED_MAX_PAGES", 1)
    user = user_factory()
    researcher = researcher_factory()
    for i in range(25):
        authored_paper(researcher, title=f"Capped paper {i:02d}")
    researcher_follow(user=user, researcher=researcher)
    client.force_login(user)
    html = client.get("/following").content.decode()
    assert "25 papers, newest first; the newest 20 are here" in html
    assert 'rel="next"' not in html
    assert client.get("/following", {"page": 2}).content.decode().count('class="paper-item"') == 20


def test_feed_names_new_papers_citing_followed_work(
    client, user_factory, researcher_factory, authored_paper, paper_factory
):
    from papers.citations.load import citing_works_load
    from sources.citation_answers import CitedWork

    user = user_factory()
    ada = researcher_factory("Ada Lovelace")
    researcher_follow(user=user, researcher=ada)
    hers = authored_paper(ada, title="Her paper")
    citing = paper_factory(title="A paper citing hers")
    citing_works_load(
        cited_paper_id=hers.pk,
        source="openalex",
        fetched_at=citing.published,
        citing_works=[CitedWork(arxiv_id=citing.arxiv_id)],
    )
    client.force_login(user)

    text = " ".join(re.sub(r"<[^>]+>", " ", client.get("/following").content.decode()).split())
    md = client.get("/following", HTTP_ACCEPT="text/markdown").content.decode()

    assert "A new paper, A paper citing hers" in text
    assert "cites Her paper by Ada Lovelace · from OpenAlex" in text
    assert "## New papers citing their work" in md and "by Ada Lovelace (from OpenAlex)" in md
