"""papers.archive_time: a daily harvest keeps real time; an archive whose newest paper is old
(the demo's sample) is read as a sample, whose windows reach back over all of it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from papers.archive_time import archive_span_forget, archive_time

pytestmark = pytest.mark.django_db


def test_auto_reads_an_archive_with_nothing_recent_as_a_sample(paper_factory, settings):
    settings.ARCHIVE_CLOCK = "auto"
    settings.ARCHIVE_SAMPLE_AFTER_DAYS = 60
    now = timezone.now()
    oldest = paper_factory(published=now - timedelta(days=5000)).published
    newest = paper_factory(published=now - timedelta(days=400)).published
    archive_span_forget()
    clock = archive_time(now=now)
    assert clock.is_sample and (clock.newest, clock.oldest) == (newest, oldest)
    assert clock.window_start(30) == oldest
    # A harvest brings a paper of this week: real time again (once the cached span expires).
    paper_factory(published=now - timedelta(days=2))
    archive_span_forget()
    clock = archive_time(now=now)
    assert not clock.is_sample and clock.window_start(30) == now - timedelta(days=30)


def test_now_never_reads_a_sample_and_asks_nothing(
    paper_factory, settings, django_assert_num_queries
):
    settings.ARCHIVE_CLOCK = "now"
    paper_factory(published=timezone.now() - timedelta(days=4000))
    with django_assert_num_queries(0):
        assert not archive_time().is_sample


def test_sample_always_does(paper_factory, settings):
    settings.ARCHIVE_CLOCK = "sample"
    paper_factory(published=timezone.now())
    archive_span_forget()
    assert archive_time().is_sample
