"""Limits hold under parallel requests on PostgreSQL: each is reserved before the work, with
the account's row locked, so requests sent at once cannot all pass a check only some fit.
(SQLite serialises every writer, so it has no such race to test.)"""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from accounts.library.lists import LIBRARY_MAX_LISTS, LibraryError, reading_list_create
from chat.answers import ask
from chat.models import ChatMessage
from chat.quotas import QuotaExceeded
from researchers.curation.reports import ReportThrottled, match_report_create
from researchers.models import MatchReport, Researcher

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _at_once(count: int, work) -> list:
    """Run `work(i)` in `count` threads released together; each result or exception."""
    start = threading.Barrier(count)
    results: list = [None] * count

    def run(i: int) -> None:
        start.wait()
        try:
            results[i] = work(i)
        except Exception as error:  # noqa: BLE001 (the outcome is what is counted)
            results[i] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_twenty_reports_at_once_file_no_more_than_the_hourly_limit(settings):
    settings.MATCH_REPORTS_PER_HOUR = 10
    reader = get_user_model().objects.create_user("reporter", "r@example.org", "pw-r-123456")
    records = [Researcher.objects.create(display_name=f"A. Person {i}") for i in range(21)]

    def report(i: int):
        return match_report_create(
            user=reader,
            kind=MatchReport.SAME_PERSON,
            researcher_id=records[0].pk,
            other_researcher_id=records[i + 1].pk,
        )

    outcomes = _at_once(20, report)
    filed = [o for o in outcomes if isinstance(o, MatchReport)]
    throttled = [o for o in outcomes if isinstance(o, ReportThrottled)]
    assert (len(filed), len(throttled)) == (10, 10), outcomes
    assert MatchReport.objects.filter(reporter=reader).count() == 10


def test_the_same_report_sent_eight_times_at_once_is_stored_once():
    reader = get_user_model().objects.create_user("twice", "t@example.org", "pw-t-123456")
    one, other = (Researcher.objects.create(display_name=n) for n in ("B. One", "B. Other"))

    def report(_: int):
        return match_report_create(
            user=reader,
            kind=MatchReport.SAME_PERSON,
            researcher_id=one.pk,
            other_researcher_id=other.pk,
        )

    outcomes = _at_once(8, report)
    assert all(isinstance(o, MatchReport) for o in outcomes), outcomes
    assert len({o.pk for o in outcomes}) == 1
    assert MatchReport.objects.filter(reporter=reader).count() == 1


def test_questions_asked_at_once_reserve_the_days_token_budget(settings):
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://127.0.0.1:9/v1", "a-model"
    settings.CHAT_TOKENS_PER_DAY = 30_000
    settings.CHAT_TOKENS_RESERVED_PER_ANSWER = 10_000
    settings.CHAT_MESSAGES_PER_HOUR = 100
    reader = get_user_model().objects.create_user("asker", "a@example.org", "pw-a-123456")

    outcomes = _at_once(20, lambda i: ask(reader, f"question number {i}"))
    taken = [o for o in outcomes if isinstance(o, tuple)]
    refused = [o for o in outcomes if isinstance(o, QuotaExceeded)]
    assert (len(taken), len(refused)) == (3, 17), outcomes
    held = ChatMessage.objects.filter(user=reader, role=ChatMessage.Role.ASSISTANT)
    assert sorted(held.values_list("reserved_tokens", flat=True)) == [10_000] * 3


def test_eight_lists_made_at_once_at_96_stop_at_the_librarys_100():
    from accounts.library.models import ReadingList

    reader = get_user_model().objects.create_user("lister", "l@example.org", "pw-l-123456")
    ReadingList.objects.bulk_create(
        [ReadingList(user=reader, name=f"List {i}") for i in range(LIBRARY_MAX_LISTS - 4)]
    )

    outcomes = _at_once(8, lambda i: reading_list_create(user=reader, name=f"New {i}"))
    made = [o for o in outcomes if isinstance(o, ReadingList)]
    refused = [o for o in outcomes if isinstance(o, LibraryError)]
    assert (len(made), len(refused)) == (4, 4), outcomes
    assert ReadingList.objects.filter(user=reader).count() == LIBRARY_MAX_LISTS


def test_claims_made_at_once_stop_at_the_pending_cap(settings):
    from accounts.models import Claim
    from accounts.ownership.claims import ClaimRefused, researcher_claim

    settings.CLAIMS_MAX_PENDING = 3
    reader = get_user_model().objects.create_user("claimer", "cl@example.org", "pw-c-123456")
    records = [Researcher.objects.create(display_name=f"C. Person {i}") for i in range(8)]

    outcomes = _at_once(8, lambda i: researcher_claim(user=reader, researcher=records[i]))
    made = [o for o in outcomes if isinstance(o, Claim)]
    refused = [o for o in outcomes if isinstance(o, ClaimRefused)]
    assert (len(made), len(refused)) == (3, 5), outcomes
    assert Claim.objects.filter(user=reader).count() == 3
