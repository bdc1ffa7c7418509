"""Digest emails: content, nothing-new, idempotent retries, unsubscribe tokens."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.core import mail, signing
from django.test import Client
from django.utils import timezone

from accounts.digests import (
    UNSUBSCRIBE_SALT,
    digest_send,
    digests_send_due,
    period_key,
    unsubscribe_token,
)
from accounts.follows import researcher_follow
from accounts.models import Profile, SentDigest
from accounts.tasks import send_digests
from papers.models import Authorship, Paper

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 25, 6, 0, tzinfo=UTC)  # a Wednesday


@pytest.fixture
def reader(user_factory, researcher_factory, authored_paper):
    """A daily-digest reader following Ada, who has one paper from yesterday and one old one."""
    user = user_factory(digest=Profile.Digest.DAILY)
    ada = researcher_factory("Ada Lovelace")
    researcher_follow(user=user, researcher=ada)
    authored_paper(
        ada, title="Notes on <the> analytical engine", published=NOW - timedelta(hours=10)
    )
    authored_paper(ada, title="An old sketch", published=NOW - timedelta(days=30))
    user.ada = ada
    return user


def test_digest_lists_new_papers_in_text_and_html(reader):
    mail.outbox.clear()
    outcome = digest_send(user_id=reader.pk, now=NOW)
    assert outcome.status == "sent" and outcome.paper_count == 1
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [reader.email]
    assert message.subject == "[wovepaper] 1 new paper by researchers you follow"
    assert "Notes on <the> analytical engine" in message.body
    assert "An old sketch" not in message.body
    html, mimetype = message.alternatives[0]
    assert mimetype == "text/html"
    assert "Notes on &lt;the&gt; analytical engine" in html  # user text escaped in HTML
    link = re.search(r"http://\S+/digest/unsubscribe/(\S+)", message.body)
    token = link.group(1)
    assert signing.TimestampSigner(salt=UNSUBSCRIBE_SALT).unsign(token) == str(reader.pk)
    assert f"/digest/unsubscribe/{token}" in html
    assert message.extra_headers["List-Unsubscribe"] == f"<{link.group(0)}>"
    assert message.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert SentDigest.objects.get(user=reader).period_key == "daily:2026-11-25"
    assert Profile.objects.get(user=reader).last_digest_at == NOW


def test_nothing_new_sends_nothing(user_factory, researcher_factory, authored_paper):
    user = user_factory(digest=Profile.Digest.DAILY)
    ada = researcher_factory()
    researcher_follow(user=user, researcher=ada)
    authored_paper(ada, published=NOW - timedelta(days=3))
    mail.outbox.clear()
    assert digest_send(user_id=user.pk, now=NOW).status == "nothing-new"
    assert mail.outbox == []
    assert not SentDigest.objects.exists()


def test_retry_never_sends_twice(reader):
    mail.outbox.clear()
    assert digests_send_due(now=NOW)["sent"] == 1
    assert digests_send_due(now=NOW + timedelta(hours=2))["sent"] == 0
    assert digest_send(user_id=reader.pk, now=NOW + timedelta(hours=3)).status == "already-sent"
    assert len(mail.outbox) == 1
    assert SentDigest.objects.count() == 1


def test_next_digest_lists_only_what_came_since(reader, authored_paper):
    digest_send(user_id=reader.pk, now=NOW)
    authored_paper(reader.ada, title="A newer note", published=NOW + timedelta(hours=5))
    mail.outbox.clear()
    outcome = digest_send(user_id=reader.pk, now=NOW + timedelta(days=1))
    assert outcome.status == "sent" and outcome.paper_count == 1
    assert "A newer note" in mail.outbox[0].body
    assert "analytical engine" not in mail.outbox[0].body


def test_a_paper_matched_after_the_last_digest_is_in_the_next(reader, authored_paper):
    digest_send(user_id=reader.pk, now=NOW)
    # Published before that digest, but matching reached it only afterwards.
    late = authored_paper(reader.ada, title="Matched late", published=NOW - timedelta(days=2))
    old = authored_paper(reader.ada, title="Back catalogue", published=NOW - timedelta(days=300))
    Authorship.objects.filter(paper__in=[late, old]).update(matched_at=NOW + timedelta(hours=3))
    mail.outbox.clear()
    outcome = digest_send(user_id=reader.pk, now=NOW + timedelta(days=1))
    assert outcome.status == "sent" and outcome.paper_count == 1
    assert "Matched late" in mail.outbox[0].body
    assert "Back catalogue" not in mail.outbox[0].body
    # Sent once: the next day has nothing new.
    mail.outbox.clear()
    assert digest_send(user_id=reader.pk, now=NOW + timedelta(days=2)).status == "nothing-new"


def test_a_failed_send_is_retried(reader, settings):
    # Nothing listens on port 1: the SMTP connection is refused for real.
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 1, 2
    with pytest.raises(OSError):
        digest_send(user_id=reader.pk, now=NOW)
    assert not SentDigest.objects.exists()
    assert digests_send_due(now=NOW)["failed"] == 1  # the run goes on and reports it
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    mail.outbox = []
    assert digest_send(user_id=reader.pk, now=NOW).status == "sent"
    assert len(mail.outbox) == 1


def test_weekly_digest_is_once_per_iso_week(user_factory, researcher_factory, authored_paper):
    user = user_factory(digest=Profile.Digest.WEEKLY)
    ada = researcher_factory()
    researcher_follow(user=user, researcher=ada)
    authored_paper(ada, published=NOW - timedelta(days=2))
    mail.outbox.clear()
    assert digest_send(user_id=user.pk, now=NOW).status == "sent"
    authored_paper(ada, published=NOW + timedelta(days=1))
    assert digest_send(user_id=user.pk, now=NOW + timedelta(days=2)).status == "already-sent"
    assert digest_send(user_id=user.pk, now=NOW + timedelta(days=5)).status == "sent"
    assert len(mail.outbox) == 2
    assert period_key("weekly", NOW) == "weekly:2026-W48"


def test_users_who_want_no_digest_get_none(reader):
    Profile.objects.filter(user=reader).update(digest_frequency=Profile.Digest.NONE)
    mail.outbox.clear()
    assert digests_send_due(now=NOW)["sent"] == 0
    assert mail.outbox == []


def test_beat_task_sends_due_digests(reader, settings):
    assert "accounts-send-digests" in settings.CELERY_BEAT_SCHEDULE
    mail.outbox.clear()
    Profile.objects.filter(user=reader).update(last_digest_at=None)
    # The task uses the current time; the reader's new paper is from "yesterday" at NOW, so move
    # it to an hour ago.
    Paper.objects.filter(title__startswith="Notes").update(
        published=timezone.now() - timedelta(hours=1)
    )
    summary = send_digests.delay().get()
    assert summary["sent"] == 1 and len(mail.outbox) == 1


def test_unsubscribe_link_works_without_signing_in(reader, client):
    token = unsubscribe_token(user_id=reader.pk)
    # Opening the link (or a mail system's link scanner following it) only asks.
    asked = client.get(f"/digest/unsubscribe/{token}")
    assert asked.status_code == 200 and "Stop the digest emails?" in asked.content.decode()
    assert Profile.objects.get(user=reader).digest_frequency == Profile.Digest.DAILY
    response = client.post(f"/digest/unsubscribe/{token}")
    assert response.status_code == 200
    assert "unsubscribed" in response.content.decode()
    assert Profile.objects.get(user=reader).digest_frequency == Profile.Digest.NONE
    assert client.post(f"/digest/unsubscribe/{token}").status_code == 200  # idempotent


def test_one_click_post_needs_no_csrf_token(reader):
    client = Client(enforce_csrf_checks=True)
    token = unsubscribe_token(user_id=reader.pk)
    response = client.post(f"/digest/unsubscribe/{token}", {"List-Unsubscribe": "One-Click"})
    assert response.status_code == 200
    assert Profile.objects.get(user=reader).digest_frequency == Profile.Digest.NONE


def test_tampered_token_is_refused(reader, user_factory, client):
    other = user_factory(digest=Profile.Digest.DAILY)
    token = unsubscribe_token(user_id=reader.pk)
    value, rest = token.split(":", 1)
    forged = f"{other.pk}:{rest}"  # someone else's id with this signature
    response = client.get(f"/digest/unsubscribe/{forged}")
    assert response.status_code == 400 and "isn't valid" in response.content.decode()
    assert client.get(f"/digest/unsubscribe/{token[:-2]}xx").status_code == 400
    assert Profile.objects.get(user=other).digest_frequency == Profile.Digest.DAILY
    assert Profile.objects.get(user=reader).digest_frequency == Profile.Digest.DAILY


def test_expired_token_is_refused(reader, client, settings):
    class SignedLongAgo(signing.TimestampSigner):
        def timestamp(self):
            age = settings.DIGEST_UNSUBSCRIBE_MAX_AGE + 3600
            return signing.b62_encode(int(time.time()) - age)

    token = SignedLongAgo(salt=UNSUBSCRIBE_SALT).sign(str(reader.pk))
    response = client.get(f"/digest/unsubscribe/{token}")
    assert response.status_code == 400 and "expired" in response.content.decode()
    assert Profile.objects.get(user=reader).digest_frequency == Profile.Digest.DAILY


def test_digest_names_the_followed_paper_a_new_paper_cites(
    user_factory, researcher_factory, authored_paper, paper_factory
):
    from papers.citations.load import citing_works_load
    from sources.citation_answers import CitedWork

    user = user_factory(digest=Profile.Digest.DAILY)
    ada = researcher_factory("Ada Lovelace")
    researcher_follow(user=user, researcher=ada)
    hers = authored_paper(ada, title="An old sketch", published=NOW - timedelta(days=300))
    new = paper_factory(title="A new paper that cites her", published=NOW - timedelta(hours=5))
    old = paper_factory(title="An old paper that cites her", published=NOW - timedelta(days=90))
    citing_works_load(
        cited_paper_id=hers.pk,
        source="s2",
        fetched_at=NOW,
        citing_works=[CitedWork(arxiv_id=new.arxiv_id), CitedWork(arxiv_id=old.arxiv_id)],
    )
    mail.outbox.clear()

    outcome = digest_send(user_id=user.pk, now=NOW)

    assert outcome.status == "sent" and outcome.paper_count == 0
    message = mail.outbox[0]
    assert message.subject == "[wovepaper] 1 new paper citing researchers you follow"
    assert "A new paper, [A new paper that cites her](" in message.body
    assert "cites [An old sketch](" in message.body and "by Ada Lovelace" in message.body
    assert "An old paper that cites her" not in message.body
    html = message.alternatives[0][0]
    assert "by Ada Lovelace" in html and "A new paper that cites her" in html


@pytest.mark.postgres
def test_digest_papers_read_a_range_of_the_published_index(reader):
    # Both branches of the digest's filter are within DIGEST_LATE_MATCH_DAYS of `since`; the
    # bound is said outright so that the newest-first read of the published index (the plan
    # PostgreSQL takes at 1M papers, forced here on a few rows) stops there, not at the
    # archive's first paper (2.9 s at 1M papers, benchmarks/digest.py).
    from django.db import connection

    from accounts.feed import digest_papers

    papers = digest_papers(researcher_ids=[reader.ada.pk], since=NOW - timedelta(days=1), now=NOW)
    sql, params = papers[:51].query.sql_with_params()
    with connection.cursor() as cursor:
        for method in ("seqscan", "bitmapscan", "sort"):
            cursor.execute(f"SET LOCAL enable_{method} = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "paper_published_idx" in plan, plan
    assert re.search(r"Index Cond: .*published > ", plan), plan
