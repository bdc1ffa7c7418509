"""How papers' values are written on pages: the functions behind the template filters of both
template engines (papers.templatetags.paper_tags for Django's, papers.jinja for the list
items'), so that each is written once."""

from __future__ import annotations

from datetime import date, datetime
from functools import lru_cache
from urllib.parse import quote

from django.template.defaultfilters import date as date_filter
from django.template.defaultfilters import truncatechars
from django.utils.safestring import SafeString
from django.utils.timezone import is_aware, localtime
from django.utils.translation import get_language

from papers import mathtext
from papers.bylines import WRITTEN_SHOWN
from papers.taxonomy import category_name as _category_name


def byline_as_written(paper) -> str:
    """What a list shows of a byline that no name was read from: the byline as written, cut to
    WRITTEN_SHOWN characters (its `byline`'s, papers.selectors.papers_with_short_bylines,
    which lists read cut; else the paper's own)."""
    byline = getattr(paper, "byline", None)
    return truncatechars(byline.written if byline is not None else paper.authors, WRITTEN_SHOWN)


# What a list says of a date no source gives the day of (the paper's page says more).
MONTH_ONLY_TITLE = "The month its arXiv identifier names: no source gives the day"


def _published_local(paper, zone=None):
    when = paper.published
    return localtime(when, zone) if is_aware(when) else when


def published_iso(paper) -> str:
    """The first version's date as precisely as a source gives it, for text and machines: the
    day (2023-02-24), or the month alone (2023-02) for a paper dated by its identifier's
    month; "" when unknown."""
    if not paper.published:
        return ""
    return day(_published_local(paper), "Y-m" if paper.published_month_only else "Y-m-d")


def published_time(paper, zone=None, language: str | None = None) -> SafeString:
    """A list's <time> element for the first version's date: "3 May 2024", or "Feb 2023" with
    a title saying why for a paper dated by its identifier's month; nothing when unknown.
    `zone` and `language`: a list's own, read once for its items (papers.jinja), else the
    current ones."""
    if not paper.published:
        return SafeString("")
    when = _published_local(paper, zone)
    if paper.published_month_only:
        return SafeString(
            f'<time datetime="{day(when, "Y-m")}" title="{MONTH_ONLY_TITLE}">'
            f"{day(when, 'M Y', language)}</time>"
        )
    return SafeString(
        f'<time datetime="{day(when, "Y-m-d")}">{day(when, "j M Y", language)}</time>'
    )


def list_facts(paper) -> str:
    """What a text list says of a paper after its title: its date (published_iso), its
    categories and its citations, each only when known (a paper known only from Semantic
    Scholar or OpenAlex has no categories here), never an empty slot."""
    facts = [published_iso(paper), paper.categories]
    if paper.cited_by_count is not None:
        facts.append(f"{paper.cited_by_count} citation{'' if paper.cited_by_count == 1 else 's'}")
    return ", ".join(fact for fact in facts if fact)


def category_name(code: str) -> str:
    """cs.LG → Machine Learning; unknown codes read as themselves."""
    return _category_name(str(code or ""))


def category_url(code: str) -> str:
    """Where a category label leads: the field's page."""
    return f"/categories/{quote(str(code or ''), safe='.-')}"


# Format characters of Django's `date` filter that depend on the day alone (not on the time of
# day or the time zone's name or offset).
_DAY_CHARACTERS = frozenset("bdDEFjlLmMnNoStwWyYz")


def day(value: date | datetime | None, arg: str, language: str | None = None) -> str:
    """Django's `date` filter for a format of the day alone (e.g. "j M Y"), its answers kept
    per day, format and language: a list formats the same days over and over, at tens of
    microseconds a call. The value is in local time already (as for `date`); `language`,
    the current one unless given (a list reads it once for all its items)."""
    if not value:
        return ""
    if not isinstance(value, date) or any(
        c.isalpha() and c not in _DAY_CHARACTERS for c in arg.replace("\\", "")
    ):
        return date_filter(value, arg)
    day_of = value.date() if isinstance(value, datetime) else value
    # A machine-readable day (a <time> element's) is the same in every language: written here
    # instead of by the filter (20 µs a day not seen before, on every first page of a search).
    if arg == "Y-m-d":
        return day_of.isoformat()
    if arg == "Y-m":
        return day_of.isoformat()[:7]
    return _day(day_of, arg, language or get_language())


# Every day of arXiv's (13,000 since 1991) in the lists' two readable formats, with room to spare.
@lru_cache(maxsize=65_536)
def _day(value: date, arg: str, language: str | None) -> str:
    return date_filter(value, arg)


def tex(text: str) -> SafeString:
    """Title or abstract text, escaped, with its TeX formulas as MathML (papers.mathtext)."""
    return mathtext.tex_html(str(text or ""))


def tex_words(text: str, limit: int) -> SafeString:
    """As `tex`, cut after `limit` words without cutting a formula."""
    return mathtext.tex_html_words(str(text or ""), int(limit))
