"""What the API's paper operations find from their arguments: a paper named by its arXiv id,
and the search a set of search parameters asks for."""

from __future__ import annotations

from rest_framework.exceptions import NotFound

from papers.converters import ArxivIdConverter, normalize_old_style
from papers.models import Paper
from papers.search import paper_search
from papers.selectors import paper_named
from wovepaper.lib.bounds import day_after
from wovepaper.lib.identifiers import arxiv_id_named
from wovepaper.lib.search import SearchPage


def held_paper(arxiv_id: str) -> Paper:
    """The paper we hold with this arXiv id, or a 404: a version suffix is dropped and an
    old-style id read in any case, as the routes read them (a route's id is read again to no
    effect; a request body's is read here)."""
    paper = paper_named(normalize_old_style(ArxivIdConverter().to_python(arxiv_id)))
    if paper is None:
        raise NotFound("No paper with this arXiv id is held here.")
    return paper


def searched_page(params: dict) -> SearchPage[Paper]:
    """The page of the search PaperSearchParamsSerializer's validated values ask for: the
    search operation answers it, and its citation file holds the same papers. A `q` that is
    nothing but an arXiv id (identifiers.arxiv_id_named) finds that paper alone when it is
    held, whatever the filters, as the search page goes to it."""
    page, size = params["page"], params["page_size"]
    named = arxiv_id_named(params["q"])
    if named is not None:
        paper = paper_named(named)
        papers = [paper] if paper is not None else []
        return SearchPage(items=papers if page == 1 else [], total=len(papers))
    return paper_search(
        params["q"],
        category=params.get("category"),
        date_from=params.get("published_from"),
        date_to=day_after(params.get("published_to")),
        sort=params["sort"],
        mode=params["mode"],
        offset=(page - 1) * size,
        limit=size,
    )
