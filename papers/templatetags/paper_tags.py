from __future__ import annotations

from datetime import date, datetime
from functools import lru_cache
from urllib.parse import quote

from django import template
from django.template.defaultfilters import date as date_filter
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from papers import mathtext
from papers.listitems import paper_items_html
from papers.taxonomy import category_name as _category_name
from wovepaper.lib.search.highlight import QueryWords

register = template.Library()
# Words of an abstract a list shows (as `tex_words:40` in papers/_paper_item.html).
SNIPPET_WORDS = 40


@register.filter
def category_name(code: str) -> str:
    """cs.LG → Machine Learning; unknown codes read as themselves."""
    return _category_name(str(code or ""))


@register.filter
def category_url(code: str) -> str:
    """Where a category label leads: the field's page."""
    return f"/categories/{quote(str(code or ''), safe='.-')}"


# Format characters of Django's `date` filter that depend on the day alone (not on the time of
# day or the time zone's name or offset).
_DAY_CHARACTERS = frozenset("bdDEFjlLmMnNoStwWyYz")


@register.filter(expects_localtime=True, is_safe=False)
def day(value: date | datetime | None, arg: str) -> str:
    """Django's `date` filter for a format of the day alone (e.g. "j M Y"), its answers kept
    per day, format and language: a list formats the same days over and over, at tens of
    microseconds a call. The value is in local time already (as for `date`)."""
    if not value:
        return ""
    if not isinstance(value, date) or any(
        c.isalpha() and c not in _DAY_CHARACTERS for c in arg.replace("\\", "")
    ):
        return date_filter(value, arg)
    return _day(value.date() if isinstance(value, datetime) else value, arg, get_language())


@lru_cache(maxsize=8192)
def _day(value: date, arg: str, language: str | None) -> str:
    return date_filter(value, arg)


@register.filter
def tex(text: str) -> SafeString:
    """Title or abstract text, escaped, with its TeX formulas as MathML (papers.mathtext)."""
    return mathtext.tex_html(str(text or ""))


@register.filter
def tex_text(text: str) -> str:
    """Title or abstract text as it reads, for the tab's title and meta tags (no markup)."""
    return mathtext.plain_text(str(text or ""))


@register.filter
def titled_references(edges) -> list:
    """The references a page lists one by one: an archive paper, or a work with a title."""
    return [e for e in edges if e.cited_paper_id or e.cited_title]


@register.filter
def untitled_references(edges) -> list:
    """The works a source names by an id alone: the page names them in one line."""
    return [e for e in edges if not (e.cited_paper_id or e.cited_title)]


@register.filter
def tex_words(text: str, limit: int) -> SafeString:
    """As `tex`, cut after `limit` words without cutting a formula."""
    return mathtext.tex_html_words(str(text or ""), int(limit))


@register.simple_tag(takes_context=True)
def paper_items(context, papers) -> SafeString:
    """The list items of `papers`, each rendered once and then served from the cache
    (papers.listitems); `hide_abstracts` from the including template, and `highlight`, a
    search's words: each abstract's passage that holds them, the words marked."""
    papers = list(papers)
    hide_abstracts = bool(context.get("hide_abstracts"))
    words = QueryWords(context.get("highlight") or "")
    if not words or hide_abstracts:
        return paper_items_html(papers, hide_abstracts=hide_abstracts)
    snippets = [mathtext.tex_html_passage(p.abstract, words, SNIPPET_WORDS) for p in papers]
    return paper_items_html(papers, snippets=snippets)


@register.simple_tag
def authors_line(authorships) -> SafeString:
    """A byline's authors, comma-separated, each linked to their researcher page (when matched)
    with their institutions or the affiliation as written. Built here rather than with a
    template include per author: a 628-author byline renders in a few milliseconds."""
    parts: list[str] = []
    affil: str
    for a in authorships:
        link = getattr(a, "link", None)
        name = _linked_name(a, link.get_absolute_url()) if link is not None else escape(a.name)
        institutions = getattr(a, "institutions", [])
        if institutions:
            affil = format_html(
                '<span class="affil"> ({})</span>',
                mark_safe(
                    "; ".join(
                        format_html('<a href="{}">{}</a>', i.get_absolute_url(), i.name)
                        for i in institutions
                    )
                ),
            )
        elif a.affiliation:
            affil = format_html('<span class="affil"> ({})</span>', a.affiliation)
        else:
            affil = ""
        parts.append(format_html('<span class="author">{}{}</span>', name, affil))
    return mark_safe(", ".join(parts))


def _linked_name(a, url: str) -> SafeString:
    """The name linked to its researcher, saying on hover how matching linked them; a link
    below Authorship's certain confidence carries a small note a reader can open."""
    method = getattr(a, "match_method", "")
    if not method:  # linked before matching kept how
        return format_html('<a href="{}">{}</a>', url, a.name)
    how = a.get_match_method_display()
    confidence = a.match_confidence
    title = f"Matched by {how}" + (
        f", confidence {confidence:.2f}" if confidence is not None else ""
    )
    linked = format_html('<a href="{}" title="{}">{}</a>', url, title, a.name)
    if not a.match_uncertain:
        return linked
    return format_html(
        '{}<details class="match-note"><summary aria-label="An uncertain match: how it was '
        'made">?</summary><span>Matched by {} only (confidence {}): it may be another '
        "person; the curators review such links.</span></details>",
        linked,
        how,
        f"{confidence:.2f}",
    )


@register.simple_tag
def citation_authors(authorships) -> SafeString:
    """One `citation_author` meta tag per author (Google Scholar's), built in one pass."""
    return mark_safe(
        "".join(
            format_html('<meta name="citation_author" content="{}">', a.name) for a in authorships
        )
    )
