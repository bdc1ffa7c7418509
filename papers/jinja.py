"""The Jinja2 environment of papers' list items (`papers/*.jinja`): the one piece of markup a
page renders dozens of times (a search page shows about 36), where Django's template language
took 0.17 ms an item and Jinja2 takes 0.085 (all 3,559 demo papers, side by side). Every other
page stays in Django templates.

The filters are Django's own functions and papers.display's (as Django's templates have them),
so an item reads exactly as Django would write it (the same bytes for every demo paper): values
are escaped by Django's rule (not markupsafe's, which writes quotes differently), dates are
shown in the current time zone and language."""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any

from django.conf import settings
from django.contrib.humanize.templatetags.humanize import intcomma, ordinal
from django.template.defaultfilters import pluralize, slugify
from django.utils import timezone
from jinja2 import Environment, pass_context
from jinja2.runtime import Context

from papers import display


@pass_context
def _local_day(context: Context, value: Any, arg: str) -> str:
    # Django's templates convert an aware value to local time before a filter that expects it
    # (as `day` does, Django's template_localtime); Jinja2 does not, so it is done here, in
    # the time zone and language a list (papers.listitems) read once for its items, else the
    # current ones: reading them for each date was a twentieth of a search page's time at 1M
    # papers.
    if isinstance(value, datetime) and settings.USE_TZ and timezone.is_aware(value):
        zone = context.get("time_zone") or timezone.get_current_timezone()
        value = timezone.localtime(value, zone)
    return display.day(value, arg, context.get("language"))


@pass_context
def _published_time(context: Context, paper: Any) -> str:
    # In the list's time zone and language, as `_local_day`.
    return display.published_time(paper, context.get("time_zone"), context.get("language"))


def _escaped(value: Any) -> str:
    # Every value written ({{ … }}) is escaped here, as Django's `escape` writes it (quotes as
    # &quot; and &#x27;, without its lazy-string wrapper); safe values (__html__: Django's
    # SafeString, a macro's output marked `|safe`) are written as they are. The environment
    # does not autoescape as well: Jinja2 would wrap each value in Markup twice more (a fifth
    # of an item's time), to the same bytes.
    return value.__html__() if hasattr(value, "__html__") else escape(str(value))


def environment(**options: Any) -> Environment:
    # Escaping is `_escaped`'s, for every value; nothing here builds HTML in a {% set %} block
    # or a `caller()`, whose output it would escape again.
    options["autoescape"] = False
    env = Environment(**options, finalize=_escaped, keep_trailing_newline=True)
    env.filters.update(
        byline_as_written=display.byline_as_written,
        category_name=display.category_name,
        category_url=display.category_url,
        day=_local_day,
        intcomma=intcomma,
        ordinal=ordinal,
        pluralize=pluralize,
        published_time=_published_time,
        slugify=slugify,
        tex=display.tex,
        tex_words=display.tex_words,
    )
    return env
