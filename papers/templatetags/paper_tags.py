from __future__ import annotations

from urllib.parse import quote

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from papers import mathtext
from papers.listitems import paper_items_html
from papers.taxonomy import category_name as _category_name

register = template.Library()


@register.filter
def category_name(code: str) -> str:
    """cs.LG → Machine Learning; unknown codes read as themselves."""
    return _category_name(str(code or ""))


@register.filter
def category_url(code: str) -> str:
    """Where a category label leads: the field's page."""
    return f"/categories/{quote(str(code or ''), safe='.-')}"


@register.filter
def tex(text: str) -> SafeString:
    """Title or abstract text, escaped, with its TeX formulas as MathML (papers.mathtext)."""
    return mathtext.tex_html(str(text or ""))


@register.filter
def tex_words(text: str, limit: int) -> SafeString:
    """As `tex`, cut after `limit` words without cutting a formula."""
    return mathtext.tex_html_words(str(text or ""), int(limit))


@register.simple_tag(takes_context=True)
def paper_items(context, papers) -> SafeString:
    """The list items of `papers`, each rendered once and then served from the cache
    (papers.listitems); `hide_abstracts` from the including template."""
    return paper_items_html(list(papers), hide_abstracts=bool(context.get("hide_abstracts")))


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
