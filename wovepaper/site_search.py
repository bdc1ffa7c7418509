"""The search page's read: one call that answers the page's tab, whatever engine is set.

Papers, researchers and institutions each go through their app's selector on the search
interface (wovepaper.lib.search); this module only decides which of them the page shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from institutions.name_search import institutions_search
from papers.related.beside_matches import related_shown
from papers.search import (
    paper_search,
    paper_search_ahead,
    paper_words_held,
    paper_words_written,
)
from papers.selectors import papers_in_category, papers_with_short_bylines
from papers.spelling import Spelling, search_spelling
from researchers.name_search import people_named, researchers_search
from wovepaper.lib.bounds import day_after
from wovepaper.lib.identifiers import arxiv_id_named
from wovepaper.lib.search import SearchPage
from wovepaper.lib.search.base import is_joined, parse_text
from wovepaper.lib.search.evidence import content_words


@dataclass(frozen=True)
class SiteSearch:
    """What the search form asked, cleaned. `date_to` is inclusive, as the form shows it."""

    query: str = ""
    tab: str = "papers"
    category: str = ""
    date_from: date | None = None
    date_to: date | None = None
    sort: str = "relevance"
    mode: str = "hybrid"


@dataclass
class SiteSearchResults:
    """The tab's page of results (`main`), and on the papers tab a few researchers and
    institutions beside them, the researchers the words name (`people`: a query that names a
    person leads with them) and, when no paper is found, words to search for alone
    (`suggested_words`)."""

    main: SearchPage = field(default_factory=SearchPage)
    researchers: list = field(default_factory=list)
    people: list = field(default_factory=list)
    institutions: list = field(default_factory=list)
    suggested_words: list[str] = field(default_factory=list)
    spelling: Spelling | None = None


def _papers_found(
    search: SiteSearch, *, offset: int, limit: int, listed: bool = False
) -> SearchPage:
    return paper_search(
        search.query,
        category=search.category or None,
        date_from=search.date_from,
        # The form's end date is inclusive; the interface's is exclusive.
        date_to=day_after(search.date_to),
        sort=search.sort,
        mode=search.mode,
        offset=offset,
        limit=limit,
        related_limit=lambda matches: related_shown(matches, limit),
        listed=listed,
    )


def site_search(
    search: SiteSearch, *, offset: int, limit: int, side_limit: int
) -> SiteSearchResults:
    results = SiteSearchResults()
    if search.tab == "papers":
        if search.query:
            if offset == 0:
                # A first page by meaning embeds the words: the people and places are found
                # while that runs.
                paper_search_ahead(search.query, mode=search.mode)
            results.researchers = researchers_search(search.query, limit=side_limit).items
            results.people = people_named(search.query, results.researchers)
            results.institutions = institutions_search(search.query, limit=side_limit).items
            found = _papers_found(search, offset=offset, limit=limit, listed=True)
            # One read of bylines for both parts of a hybrid page.
            shown = papers_with_short_bylines([*found.items, *found.related])
            results.main = found.with_items(shown[: len(found.items)], shown[len(found.items) :])
            if not (found.items or found.related or found.total):
                results.suggested_words = words_to_search_alone(search.query)
            results.spelling = search_spelling(search.query, found.total)
        elif search.category:
            # No words, just a field: its newest papers, straight from the category index.
            papers = papers_in_category(code=search.category, offset=offset, limit=limit + 1)
            results.main = SearchPage(
                items=papers[:limit],
                total=offset + len(papers[:limit]),
                total_is_capped=len(papers) > limit,
            )
    elif search.tab == "researchers" and search.query:
        results.main = researchers_search(search.query, offset=offset, limit=limit)
    elif search.tab == "institutions" and search.query:
        results.main = institutions_search(search.query, offset=offset, limit=limit)
    return results


def site_search_papers(search: SiteSearch, *, offset: int, limit: int) -> list:
    """The papers a papers-tab search page lists (its matches, then what it shows as related
    by meaning), without bylines or the researchers and institutions beside them: what the
    page's citation export holds."""
    if search.tab != "papers":
        return []
    if search.query:
        found = _papers_found(search, offset=offset, limit=limit)
        return [*found.items, *found.related]
    if search.category:
        return papers_in_category(code=search.category, offset=offset, limit=limit)
    return []


def words_to_search_alone(query: str) -> list[str]:
    """What a papers page that found nothing for a query of several words suggests searching
    for alone: its content words (no "the" or "of", evidence.content_words) that some paper
    holds, so that no suggestion leads to another empty page for its words (under filters it
    still may: the empty page offers the search without them too). A joined word is in the
    vocabulary when its parts are, but its own page asks for them side by side: it is
    suggested only where some paper writes it so. An arXiv id is no words to search for."""
    if sum(len(clause.words) for clause in parse_text(query)) < 2 or arxiv_id_named(query):
        return []
    held = paper_words_held(content_words(query))
    written = set(paper_words_written([word for word in held if is_joined(word)]))
    return [word for word in held if not is_joined(word) or word in written]
