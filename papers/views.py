from __future__ import annotations

import re
from urllib.parse import quote

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse

from wovepaper.lib.api.redirects import permanent_redirect
from wovepaper.lib.identifiers import arxiv_id_month
from wovepaper.lib.negotiation import render_page
from wovepaper.lib.pagecache import cache_public_page, page_shows
from wovepaper.lib.paging import query_choice, window
from wovepaper.lib.structured_data import jsonld_with_breadcrumbs

from . import analysis as paper_analysis
from .citations.export import citation_response
from .citations.lists import (
    SORTS,
    References,
    citing_papers_page,
    paper_cited_by,
    paper_references,
    references_page,
)
from .converters import normalize_old_style
from .models import Paper
from .related.by_citations import related_by_citations
from .related.by_meaning import similar_papers
from .selectors import paper_for_page, papers_for_citation, papers_newest
from .taxonomy import category_name, popular_categories

# Bylines longer than BYLINE_FOLD_FROM names show their first BYLINE_OPEN, the rest folded.
BYLINE_FOLD_FROM = 40
BYLINE_OPEN = 30
LIST_PER_PAGE = 24
# The paper page shows the first of its references and citing papers; the rest are paged on
# their own pages, CITATIONS_PER_PAGE at a time.
CITATIONS_ON_PAPER_PAGE = 10
CITATIONS_PER_PAGE = 50
SORT_CHOICES = [("date", "date"), ("citations", "citations")]


@cache_public_page(lists=True, query=["page"])
def papers_list(request: HttpRequest) -> HttpResponse:
    """The newest papers of the whole archive, paged."""
    pager = window(
        request,
        lambda offset, limit: papers_newest(offset=offset, limit=limit),
        per_page=LIST_PER_PAGE,
    )
    return render_page(
        request,
        "papers/list",
        {"pager": pager, "papers": pager.items, "popular": popular_categories()},
    )


@cache_public_page()
def paper_detail(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    """`arxiv_id` comes from the page key (papers.converters.PaperKeyConverter), normalized."""
    paper = paper_for_page(arxiv_id)
    if paper is None or paper.is_deleted:
        raise Http404("paper not in the archive")
    canonical = paper.get_absolute_url()
    analysis = paper_analysis.analysis_of(paper)
    if request.path == canonical:
        # Opening the page asks for a missing or outdated analysis in the background (without
        # a broker and without a model, the computed parts are made here, in milliseconds).
        # Before page_shows: an analysis made here is one this page shows.
        analysis = paper_analysis.request_analysis(paper, analysis) or analysis
    page_shows(request, "paper", paper.pk)
    if request.path != canonical:
        return permanent_redirect(canonical, request)

    authorships = list(paper.authorships.all())
    for authorship in authorships:
        researcher = authorship.researcher
        # A merged record links to the record it was merged into; a longer chain is resolved by
        # that record's own redirect, so this stays one query for any byline.
        link = researcher.merged_into if researcher and researcher.merged_into_id else researcher
        setattr(authorship, "link", link)  # noqa: B010  # for paper_tags.authors_line
    # A collaboration's byline opens with its first names; the rest unfold on request.
    folded = authorships[BYLINE_OPEN:] if len(authorships) > BYLINE_FOLD_FROM else []
    abstract_paragraphs = [p.strip() for p in re.split(r"\n\s*\n", paper.abstract) if p.strip()]
    categories = [{"code": code, "name": category_name(code)} for code in paper.category_list]
    references = paper_references(paper)
    reference_items = (
        references_page(
            paper,
            source=references.shown.source,
            sort="date",
            offset=0,
            limit=CITATIONS_ON_PAPER_PAGE,
        )
        if references.shown
        else []
    )
    cited_by = paper_cited_by(paper)
    citing = (
        citing_papers_page(paper, sort="date", offset=0, limit=CITATIONS_ON_PAPER_PAGE)
        if cited_by.in_archive
        else []
    )
    return render_page(
        request,
        "papers/detail",
        {
            "paper": paper,
            "authorships": authorships,
            "paper_has_linked_authors": any(a.researcher_id for a in authorships),
            "authorships_open": authorships[: len(authorships) - len(folded)],
            "authorships_folded": folded,
            "abstract_paragraphs": abstract_paragraphs,
            "categories": categories,
            "primary_name": category_name(paper.primary_category),
            "analysis": analysis,
            # The docked chat asks about this paper.
            "chat_scope": f"paper:{paper.arxiv_id}",
            "analysis_missing": paper_analysis.analysis_parts_for_display(analysis),
            "analysis_without_abstract": paper_analysis.analysis_has_nothing_to_read(analysis),
            "analysis_outdated": analysis is not None
            and not paper_analysis.is_current(analysis, paper),
            "jsonld": _paper_jsonld(paper, authorships, categories, reference_items),
            "similar": similar_papers(paper),
            "references": references,
            "reference_items": reference_items,
            "cited_by": cited_by,
            "citing": citing,
            "related_by_citations": related_by_citations(paper, cited_by=cited_by.in_archive),
        },
    )


def _citations_paper(request: HttpRequest, arxiv_id: str) -> Paper:
    paper = paper_for_page(normalize_old_style(arxiv_id))
    if paper is None or paper.is_deleted:
        raise Http404("paper not in the archive")
    page_shows(request, "paper", paper.pk)
    return paper


@cache_public_page(query=["page", "sort", "source"])
def paper_references_list(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    """All of a paper's references from one source (`?source=`), paged, by date or citations."""
    paper = _citations_paper(request, arxiv_id)
    sort = query_choice(request, "sort", SORTS, default="date")
    references: References = paper_references(paper, source=request.GET.get("source"))
    shown = references.shown
    pager = window(
        request,
        lambda offset, limit: (
            references_page(paper, source=shown.source, sort=sort, offset=offset, limit=limit)
            if shown
            else []
        ),
        per_page=CITATIONS_PER_PAGE,
    )
    return render_page(
        request,
        "papers/references",
        {
            "paper": paper,
            "references": references,
            "pager": pager,
            "sort": sort,
            "sort_choices": SORT_CHOICES,
        },
    )


@cache_public_page(query=["page", "sort"])
def paper_cited_by_list(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    """The archive's papers citing a paper, paged, newest or most cited first."""
    paper = _citations_paper(request, arxiv_id)
    sort = query_choice(request, "sort", SORTS, default="date")
    pager = window(
        request,
        lambda offset, limit: citing_papers_page(paper, sort=sort, offset=offset, limit=limit),
        per_page=CITATIONS_PER_PAGE,
    )
    return render_page(
        request,
        "papers/cited_by",
        {
            "paper": paper,
            "cited_by": paper_cited_by(paper),
            "pager": pager,
            "sort": sort,
            "sort_choices": SORT_CHOICES,
        },
    )


def paper_citation(request: HttpRequest, arxiv_id: str, extension: str) -> HttpResponse:
    """One paper's citation: `/papers/<arxiv id>/cite.bib` (.ris, .json)."""
    arxiv_id = normalize_old_style(arxiv_id)
    papers = papers_for_citation(arxiv_ids=[arxiv_id])
    if not papers:
        raise Http404("paper not in the archive")
    return citation_response(
        papers, extension=extension, filename=f"arxiv-{arxiv_id.replace('/', '-')}"
    )


def _cited_work_jsonld(edge) -> dict:
    if edge.cited_paper is not None:
        return {
            "@type": "ScholarlyArticle",
            "name": edge.cited_paper.title,
            "url": settings.SITE_URL + edge.cited_paper.get_absolute_url(),
        }
    work: dict = {"@type": "CreativeWork"}
    if edge.cited_title:
        work["name"] = edge.cited_title
    if edge.link_out:
        work["sameAs"] = edge.link_out
    return work


def _paper_jsonld(
    paper: Paper, authorships: list, categories: list[dict], references: list
) -> dict:
    url = settings.SITE_URL + paper.get_absolute_url()
    authors = []
    for a in authorships:
        person: dict = {"@type": "Person", "name": a.name}
        if a.link is not None:
            person["url"] = settings.SITE_URL + a.link.get_absolute_url()
        authors.append(person)
    article: dict = {
        "@type": "ScholarlyArticle",
        "@id": url + "#article",
        "headline": paper.title[:110],
        "name": paper.title,
        "url": url,
        "sameAs": paper.abs_url,
        "identifier": {"@type": "PropertyValue", "propertyID": "arXiv", "value": paper.arxiv_id},
        "author": authors,
        "abstract": paper.abstract,
        "about": [c["name"] for c in categories],
        "keywords": [c["code"] for c in categories],
        "isAccessibleForFree": True,
        "publisher": {"@id": settings.SITE_URL + "/#organization"},
        "encoding": {
            "@type": "MediaObject",
            "contentUrl": paper.pdf_url,
            "encodingFormat": "application/pdf",
        },
    }
    if paper.published:
        article["datePublished"] = paper.published.date().isoformat()
    elif month := arxiv_id_month(paper.arxiv_id):
        # No source gave the day: the month the identifier names (ISO 8601's year and month).
        article["datePublished"] = f"{month[0]:04d}-{month[1]:02d}"
    if paper.updated:
        article["dateModified"] = paper.updated.isoformat()
    if paper.doi_list:
        article["sameAs"] = [paper.abs_url, *(f"https://doi.org/{doi}" for doi in paper.doi_list)]
    if paper.license:
        article["license"] = paper.license
    # The references the page lists; the rest are on the paper's references page.
    cited = [_cited_work_jsonld(edge) for edge in references]
    if cited:
        article["citation"] = cited
    primary = paper.primary_category
    field_path = f"/categories/{quote(primary)}" if primary else "/papers"
    return jsonld_with_breadcrumbs(
        article,
        [
            (category_name(primary) if primary else "Papers", field_path),
            (paper.title, paper.get_absolute_url()),
        ],
    )
