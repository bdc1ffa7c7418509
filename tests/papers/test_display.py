"""Days in the lists (papers.display.day): the machine-readable day of a <time> element is
written without Django's date filter, and is exactly what the filter writes, for every day of
arXiv's and in any language."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
from django.template.defaultfilters import date as date_filter
from django.utils import translation

from papers.display import day

EVERY_DAY = [date(1991, 8, 14) + timedelta(days=n) for n in range(0, 13_000, 7)]


@pytest.mark.parametrize("arg", ["Y-m-d", "Y-m"])
@pytest.mark.parametrize("language", ["en", "de"])
def test_a_machine_readable_day_is_the_filter_s_own(arg, language):
    with translation.override(language):
        assert [day(d, arg) for d in EVERY_DAY] == [date_filter(d, arg) for d in EVERY_DAY]


def test_a_readable_day_still_follows_the_language():
    first = datetime(2017, 6, 12, 17, 57)
    assert day(first, "j M Y", "en") == "12 Jun 2017"
    with translation.override("de"):
        assert day(first, "j M Y") == date_filter(first, "j M Y")
    assert day(first, "Y-m-d") == "2017-06-12"
    assert day(None, "Y-m-d") == ""
