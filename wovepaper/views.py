"""Site-wide pages: home, search, about, contact, privacy and the 404."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from institutions.selectors import institutions_search
from papers.search import paper_search
from papers.selectors import (
    category_is_held,
    papers_in_category,
    papers_newest,
    papers_with_short_bylines,
)
from papers.taxonomy import POPULAR, archive_name, category_name, is_known_category
from papers.views import PAPER_KEY
from researchers.selectors import researchers_active_in_category, researchers_search
from wovepaper.lib.negotiation import render_page, wants_markdown
from wovepaper.lib.paging import window

from .forms import SORTS, TABS, SearchForm
from .selectors import site_figures

PER_PAGE = 20
LIST_PER_PAGE = 24
ACTIVE_WINDOW = 300
SIDE_RESULTS = 5
MAX_SEARCH_PAGE = 100


def home(request: HttpRequest) -> HttpResponse:
    return render_page(
        request,
        "wovepaper/home",
        {
            "figures": site_figures(),
            "papers": papers_newest(limit=10),
            "popular": _popular(),
        },
    )


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
        {"pager": pager, "papers": pager.items, "popular": _popular()},
    )


def category(request: HttpRequest, code: str) -> HttpResponse:
    """An arXiv category: its newest papers, the researchers most active in it lately, its feeds."""
    if not is_known_category(code) and not category_is_held(code):
        raise Http404("not an arXiv category we hold")
    pager = window(
        request,
        lambda offset, limit: papers_in_category(code=code, offset=offset, limit=limit),
        per_page=LIST_PER_PAGE,
    )
    return render_page(
        request,
        "papers/category",
        {
            "code": code,
            "name": category_name(code),
            "archive": archive_name(code),
            "pager": pager,
            "papers": pager.items,
            "active": researchers_active_in_category(code, recent=ACTIVE_WINDOW)
            if pager.page == 1
            else [],
            "active_window": ACTIVE_WINDOW,
        },
    )


def _popular() -> list[dict]:
    return [{"code": code, "name": category_name(code)} for code in POPULAR]


def search(request: HttpRequest) -> HttpResponse:
    form = SearchForm(request.GET or None)
    data = form.cleaned_data if form.is_valid() else {}
    query = data.get("q", "")
    tab = data.get("tab") or "papers"
    category = data.get("category", "")
    context: dict = {
        "form": form,
        "query": query,
        "tab": tab,
        "category": category,
        "category_label": category_name(category) if category else "",
        "sort": data.get("sort") or "relevance",
        "sorts": SORTS,
        "date_from": data.get("date_from"),
        "date_to": data.get("date_to"),
        "papers": [],
        "researchers": [],
        "institutions": [],
        "pager": None,
        "total": None,
        "total_is_capped": False,
        "popular": _popular(),
    }
    if form.is_bound and form.is_valid():
        if tab == "papers":
            _search_papers(request, context, data)
            if query:
                context["researchers"] = researchers_search(query, limit=SIDE_RESULTS)
                context["institutions"] = institutions_search(query, limit=SIDE_RESULTS)
        elif tab == "researchers" and query:
            pager = window(
                request,
                lambda o, n: researchers_search(query, offset=o, limit=n),
                per_page=PER_PAGE,
                max_page=MAX_SEARCH_PAGE,
            )
            context.update(pager=pager, researchers=pager.items)
        elif tab == "institutions" and query:
            pager = window(
                request,
                lambda o, n: institutions_search(query, offset=o, limit=n),
                per_page=PER_PAGE,
                max_page=MAX_SEARCH_PAGE,
            )
            context.update(pager=pager, institutions=pager.items)
    # Words that name a researcher or an institution but appear in no paper lead with the names.
    context["names_lead"] = bool(
        query
        and tab == "papers"
        and not context["total"]
        and not context["papers"]
        and (context["researchers"] or context["institutions"])
    )
    context["tab_urls"] = {t: _tab_url(request, t) for t in TABS}
    # A history restore asks for the whole page again, even though it comes from htmx.
    if request.htmx and not request.htmx.history_restore_request and not wants_markdown(request):
        response = render(request, "wovepaper/_search_results.html", context)
    else:
        response = render_page(request, "wovepaper/search", context)
    patch_vary_headers(response, ["HX-Request"])
    return response


def _tab_url(request: HttpRequest, tab: str) -> str:
    params = request.GET.copy()
    params.pop("page", None)
    params["tab"] = tab
    return f"{request.path}?{params.urlencode()}"


def _search_papers(request: HttpRequest, context: dict, data: dict) -> None:
    query, category = data.get("q", ""), data.get("category", "")
    if query:
        date_to = data.get("date_to")
        found = {}

        def fetch(offset: int, limit: int) -> list:
            result = paper_search(
                query,
                category=category or None,
                date_from=data.get("date_from"),
                # The form's end date is inclusive; the backend's is exclusive.
                date_to=date_to + timedelta(days=1) if date_to else None,
                sort=data.get("sort") or "relevance",
                offset=offset,
                limit=limit,
            )
            found["result"] = result
            return result.papers

        pager = window(request, fetch, per_page=PER_PAGE, max_page=MAX_SEARCH_PAGE)
        result = found["result"]
        if result.total and not result.total_is_capped:
            pager.total_pages = min(-(-result.total // PER_PAGE), MAX_SEARCH_PAGE)
        context.update(
            pager=pager,
            papers=papers_with_short_bylines(pager.items),
            total=result.total,
            total_is_capped=result.total_is_capped,
        )
    elif category:
        # No words, just a field: its newest papers, straight from the category index.
        pager = window(
            request,
            lambda o, n: papers_in_category(code=category, offset=o, limit=n),
            per_page=PER_PAGE,
            max_page=MAX_SEARCH_PAGE,
        )
        context.update(pager=pager, papers=pager.items)


def about(request: HttpRequest) -> HttpResponse:
    return render_page(request, "wovepaper/about", {})


def contact(request: HttpRequest) -> HttpResponse:
    return render_page(request, "wovepaper/contact", {"contact_email": settings.CONTACT_EMAIL})


def privacy(request: HttpRequest) -> HttpResponse:
    return render_page(request, "wovepaper/privacy", {"contact_email": settings.CONTACT_EMAIL})


URL_PATTERNS = [
    ("/papers/<arXiv id>", "a paper, e.g. /papers/2401.01234 or /papers/astro-ph/9901001"),
    ("/researchers/<id>", "a researcher, e.g. /researchers/42"),
    ("/institutions/<id, ROR id or name>", "an institution, e.g. /institutions/00f54p054"),
    ("/search?q=<words>", "search papers, researchers and institutions"),
    ("/researchers", "browse researchers"),
    ("/institutions", "browse institutions"),
    ("/following", "new papers by the researchers you follow (signed in)"),
    ("/feeds/latest.rss", "the newest papers as RSS (also .atom, per category and per researcher)"),
    ("/developers", "the REST API under /api/v1/, described at /openapi.json"),
    ("/llms.txt, /sitemap.xml", "for automated readers"),
    ("/about, /contact, /privacy", "about the site"),
]


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    context: dict = {"patterns": URL_PATTERNS}
    match = PAPER_KEY.match(request.path.removeprefix("/papers/"))
    if request.path.startswith("/papers/") and match:
        # Likely a paper we have not harvested yet: arXiv itself has it.
        context["arxiv_url"] = f"https://arxiv.org/abs/{match['id']}"
    return render_page(request, "wovepaper/404", context, status=404)
