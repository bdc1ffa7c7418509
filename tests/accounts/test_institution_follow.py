"""Following institutions: the button, the feed of followed papers, the digest, and the
institution's public RSS/Atom feed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import feedparser
import pytest
from django.core import mail

from accounts.digests import digest_send
from accounts.follows import institution_follow
from accounts.models import InstitutionFollow, Profile
from institutions.models import AuthorshipInstitution, Institution
from papers.models import Authorship

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 25, 6, 0, tzinfo=UTC)


@pytest.fixture
def cern(paper_factory):
    """CERN, with one paper from yesterday by someone nobody follows, and an old one."""
    institution = Institution.objects.create(name="CERN", country_code="CH", paper_count=2)
    for title, published in (
        ("Beams at the edge", NOW - timedelta(hours=10)),
        ("An old run", NOW - timedelta(days=40)),
    ):
        paper = paper_factory(title=title, authors=["Una Unfollowed"], published=published)
        AuthorshipInstitution.objects.create(
            authorship=Authorship.objects.get(paper=paper, position=1),
            institution=institution,
            paper=paper,
        )
    return institution


def test_follow_and_unfollow_an_institution_with_htmx(client, user_factory, cern):
    user = user_factory()
    client.force_login(user)
    page = client.get(cern.get_absolute_url()).content.decode()
    # reader.js makes the shared page's button the reader's, from their state.
    assert f'action="/following/institutions/{cern.pk}/follow"' in page
    assert 'data-following="false" hidden' in page
    assert client.get("/me/state").json()["following"]["institution"] == []
    response = client.post(
        f"/following/institutions/{cern.pk}/follow", {"next": "/x"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert 'aria-pressed="true"' in response.content.decode()
    assert "1 follower" in response.content.decode()
    assert InstitutionFollow.objects.filter(user=user, institution=cern).count() == 1
    client.post(f"/following/institutions/{cern.pk}/follow")  # twice is once
    assert InstitutionFollow.objects.filter(user=user, institution=cern).count() == 1
    response = client.post(f"/following/institutions/{cern.pk}/unfollow", {"next": "/following"})
    assert response.status_code == 302 and response["Location"] == "/following"
    assert not InstitutionFollow.objects.filter(user=user).exists()


def test_signed_out_visitors_are_sent_to_sign_in(client, cern):
    html = client.get(cern.get_absolute_url()).content.decode()
    assert "Sign in to follow" in html
    response = client.post(f"/following/institutions/{cern.pk}/follow")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not InstitutionFollow.objects.exists()


def test_followed_institutions_papers_are_in_the_feed(client, user_factory, cern):
    user = user_factory()
    institution_follow(user=user, institution=cern)
    client.force_login(user)
    html = client.get("/following").content.decode()
    assert "Beams at the edge" in html and "An old run" in html
    assert "Institutions you follow" in html and ">CERN</a>" in html
    assert "2 papers, newest first" in html


def test_followed_institutions_papers_are_in_the_digest(user_factory, cern):
    user = user_factory(digest=Profile.Digest.DAILY)
    institution_follow(user=user, institution=cern)
    mail.outbox.clear()
    outcome = digest_send(user_id=user.pk, now=NOW)
    assert outcome.status == "sent" and outcome.paper_count == 1
    message = mail.outbox[0]
    assert message.subject == "[wovepaper] 1 new paper by researchers and institutions you follow"
    assert "Beams at the edge" in message.body and "An old run" not in message.body


def test_institution_feeds_list_its_papers_and_are_linked(client, cern):
    html = client.get(cern.get_absolute_url()).content.decode()
    assert (
        f'<link rel="alternate" type="application/rss+xml" title="wovepaper: papers from CERN"'
        f' href="/institutions/{cern.pk}/feed.rss">' in html
    )
    for extension in ("rss", "atom"):
        response = client.get(f"/institutions/{cern.pk}/feed.{extension}")
        assert response.status_code == 200
        feed = feedparser.parse(response.content)
        assert feed.feed.title == "wovepaper: papers from CERN"
        assert [e.title for e in feed.entries] == ["Beams at the edge", "An old run"]
    assert client.get("/institutions/999999/feed.rss").status_code == 404
