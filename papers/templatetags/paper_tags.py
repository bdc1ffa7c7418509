from __future__ import annotations

from django import template
from django.template.loader import get_template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from papers import display, mathtext
from papers.listitems import BYLINE_TEMPLATE, ITEM_ENGINE, paper_items_html
from wovepaper.lib.search.highlight import QueryWords

register = template.Library()
# Words of an abstract a list shows (as `tex_words(40)` in papers/_paper_item.jinja).
SNIPPET_WORDS = 40


register.filter("byline_as_written", display.byline_as_written)
register.filter("category_name", display.category_name)
register.filter("list_facts", display.list_facts)
register.filter("published_iso", display.published_iso)
register.filter("published_time", display.published_time)
register.filter("category_url", display.category_url)
register.filter("day", display.day, expects_localtime=True, is_safe=False)
register.filter("tex", display.tex)
register.filter("tex_words", display.tex_words)


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


@register.simple_tag(takes_context=True)
def paper_items(context, papers) -> SafeString:
    """The list items of `papers`, each rendered once and then served from the cache
    (papers.listitems); `hide_abstracts` from the including template, and `highlight`, a
    search's words: each abstract's passage that holds them, the words marked."""
    papers = list(papers)
    hide_abstracts = bool(context.get("hide_abstracts"))
    words = QueryWords(context.get("highlight") or "")
    shown = [p.title for p in papers] + ([] if hide_abstracts else [p.abstract for p in papers])
    with mathtext.formulas_shared(shown):
        if not words or hide_abstracts:
            return paper_items_html(papers, hide_abstracts=hide_abstracts)
        snippets = [mathtext.tex_html_passage(p.abstract, words, SNIPPET_WORDS) for p in papers]
        return paper_items_html(papers, snippets=snippets)


@register.simple_tag
def short_byline(paper) -> SafeString:
    """A list's short byline for `paper` (with its `byline`, papers.selectors), as the list
    items write it (papers/_byline.jinja): for a list that is not made of those items."""
    jinja_template = get_template(BYLINE_TEMPLATE, using=ITEM_ENGINE).template  # type: ignore[attr-defined]
    macro = jinja_template.module.short_byline
    return mark_safe(str(macro(getattr(paper, "byline", None), paper)))  # noqa: S308


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
