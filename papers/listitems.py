"""Paper list items rendered once and reused: every list (home, search, category, researcher,
institution, following) shows a paper the same way, so its rendered item is kept in the cache
(Redis in production, shared by every web process) and a page renders only the items no page
has shown lately.

An item's key is a digest of everything it shows: the paper's title, abstract, dates,
categories and citation figures, its short byline (names, researcher links, the page's own
researcher in place), whether abstracts are hidden, the time zone and language it is shown in,
and the code that renders it (the templates, TeX conversion, category names). Any change to
one of these, however it was made (an admin edit, a harvest, a bulk update that sends no
signal, a curator's merge that re-points authorships, a researcher's new slug), gives a new
key: an item is never stale and needs no invalidation; old items simply go unread and expire
after LIST_ITEM_CACHE_SECONDS.
What a page asks per query (the query itself, the count, the sort) is outside the items.

The digest is over the values the page has read anyway: the cost of a hit is hashing about a
kilobyte a paper, and one `get_many` for the page.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.template.loader import get_template
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import get_current_timezone, get_current_timezone_name
from django.utils.translation import get_language

from wovepaper.lib.versions import code_digest

from . import display
from .models import Paper

log = logging.getLogger(__name__)

ITEM_TEMPLATE = "papers/_paper_item.jinja"
# The engine of the items' templates (settings.TEMPLATES; papers/jinja.py says why).
ITEM_ENGINE = "jinja2"
BYLINE_TEMPLATE = "papers/_byline.jinja"
_APP = Path(__file__).resolve().parent
# What an item's HTML is made by: a change to any of them is a new rendering, so a new key.
RENDERED_BY = (
    settings.BASE_DIR / "templates" / "papers" / "_paper_item.jinja",
    settings.BASE_DIR / "templates" / "papers" / "_byline.jinja",
    _APP / "jinja.py",
    _APP / "display.py",
    _APP / "templatetags" / "paper_tags.py",
    _APP / "mathtext.py",
    _APP / "taxonomy.py",
    _APP / "models.py",
    _APP / "bylines.py",
    Path(__file__),
)
RENDERED_WITH = ("django", "jinja2", "latex2mathml")


@lru_cache(maxsize=1)
def renderer_version() -> str:
    """A digest of the code that renders an item (read once per process)."""
    return code_digest(RENDERED_BY, RENDERED_WITH)


def shown_in() -> tuple[str, str]:
    """The time zone dates are shown in and the language of numbers and months: the same for
    every item of a page, so read once a page."""
    return get_current_timezone_name(), get_language()


def item_key(paper: Paper, *, hide_abstracts: bool, locale: tuple[str, str] | None = None) -> str:
    """The cache key of `paper`'s item: a digest of everything the item shows, `locale` being
    what `shown_in` gives (read here when not given)."""
    byline = getattr(paper, "byline", None)
    names = byline.names if byline is not None else []
    shown = (
        paper.arxiv_id,
        paper.slug,
        paper.title,
        "" if hide_abstracts else paper.abstract,
        hide_abstracts,
        paper.published.isoformat() if paper.published else "",
        paper.categories,
        paper.cited_by_count,
        paper.cited_by_source,
        paper.cited_by_updated_at.isoformat() if paper.cited_by_updated_at else "",
        # The byline as written stands in when no name was read.
        "" if names else display.byline_as_written(paper),
        byline.total if byline is not None else None,
        [(n.name, n.url, n.position, n.focus, n.after_gap) for n in names],
        # Dates are shown in the current time zone, numbers and months in the language.
        locale or shown_in(),
    )
    digest = hashlib.blake2b(repr(shown).encode(), digest_size=16).hexdigest()
    return f"listitem:{renderer_version()}:{paper.pk}:{digest}"


def paper_items_html(
    papers: Sequence[Paper],
    *,
    hide_abstracts: bool = False,
    snippets: Sequence[SafeString] | None = None,
) -> SafeString:
    """The list items of `papers` (each with its `byline`, papers.selectors), as
    `papers/_paper_item.jinja` renders them: from the cache where held, rendered and kept
    otherwise. Without the cache (unreachable, or LIST_ITEM_CACHE_SECONDS = 0) every item is
    rendered. `snippets` (safe HTML, one a paper: a search's passages with the words marked)
    stand in the items for their abstracts: the items are the ones without abstracts, each
    snippet added at its item's end, so what depends on the query is never kept."""
    if snippets is not None:
        hide_abstracts = True
    seconds = settings.LIST_ITEM_CACHE_SECONDS
    locale = shown_in()
    keys = [item_key(paper, hide_abstracts=hide_abstracts, locale=locale) for paper in papers]
    held: dict[str, str] = {}
    if seconds > 0 and keys:
        try:
            held = cache.get_many(keys)
        except Exception:  # noqa: BLE001 (any cache backend's error: render them all)
            log.warning("list items: cache unreachable, rendering them")
    template = get_template(ITEM_TEMPLATE, using=ITEM_ENGINE)
    # The items' dates in the page's time zone and language (the `locale` of their keys).
    context = {
        "hide_abstracts": hide_abstracts,
        "time_zone": get_current_timezone(),
        "language": locale[1],
    }
    rendered: dict[str, str] = {}
    parts: list[str] = []
    for paper, key in zip(papers, keys, strict=True):
        html = held.get(key) or rendered.get(key)
        if html is None:
            # The template's own output, escaping included: what is kept is what an include
            # in the list would have written.
            html = rendered[key] = str(template.render({"paper": paper, **context}))
        parts.append(html)
    if snippets is not None:
        parts = [
            _with_snippet(part, snippet) for part, snippet in zip(parts, snippets, strict=True)
        ]
    if seconds > 0 and rendered:
        try:
            cache.set_many(rendered, seconds)
        except Exception:  # noqa: BLE001 (the page is served; its items are only not kept)
            log.warning("list items: cache unreachable, %d item(s) not kept", len(rendered))
    # Each part is the autoescaping template's output.
    return mark_safe("".join(parts))  # noqa: S308


def _with_snippet(item: str, snippet: SafeString) -> str:
    body, closing, rest = item.rpartition("</li>")
    return f'{body}<p class="abstract-snippet">{snippet}</p>{closing}{rest}' if snippet else item
