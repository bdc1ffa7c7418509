"""Site-wide pages: home, search, about, contact, privacy and the 404, and the category page,
which shows the researchers active in a category beside its papers (so it is no page of the
papers app, which imports no researchers module)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import defaults

from papers.citations.export import citation_response
from papers.converters import PAPER_KEY
from papers.related.beside_matches import related_shown
from papers.selectors import category_is_held, paper_named, papers_in_category, papers_newest
from papers.taxonomy import archive_name, category_name, is_known_category, popular_categories
from papers.views import LIST_PER_PAGE
from researchers.selectors import researchers_active_in_category
from wovepaper.lib.api.errors import error_body
from wovepaper.lib.identifiers import arxiv_id_named
from wovepaper.lib.negotiation import render_page, wants_htmx_fragment, wants_markdown
from wovepaper.lib.pagecache import cache_public_page
from wovepaper.lib.paging import page_number, search_window, window
from wovepaper.lib.request_types import HtmxHttpRequest
from wovepaper.lib.search.base import parse_text

from .forms import MODES, SORTS, TABS, SearchForm
from .selectors import site_figures
from .site_search import SiteSearch, site_search, site_search_papers

# Papers a search page lists, as Google Scholar, Semantic Scholar and PubMed list them: ten, with
# their passages (and on the first page the few related by meaning below them). Twenty, with ten
# related below them, made a search asked for the first time cost three home pages (#43,
# docs/performance.md).
PER_PAGE = 10
ACTIVE_WINDOW = 300
SIDE_RESULTS = 5
# Search results page to the end: an engine with exact counts (tantivy, FTS5) reads any page
# by offset in one call; PostgreSQL's ranked pool and OpenSearch's window end at 10,000, and
# their pager stops there. The bound only keeps a hand-typed page number sane.
MAX_SEARCH_PAGE = 200_000


@cache_public_page(lists=True)
def home(request: HttpRequest) -> HttpResponse:
    return render_page(
        request,
        "wovepaper/home",
        {
            "figures": site_figures(),
            "papers": papers_newest(limit=10),
            "popular": popular_categories(),
        },
    )


@cache_public_page(lists=True, query=["page"])
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


# A query asked again (a popular one, or paging back) is served from the page cache like any
# anonymous page, until new papers arrive (the lists token); the figures it shows of papers
# already there are at most PAGE_CACHE_SECONDS old, as on every list.
@cache_public_page(lists=True, query=[*SearchForm.base_fields, "page"])
def search(request: HtmxHttpRequest) -> HttpResponse:
    """Form, then the one search selector, then render (the results fragment for htmx)."""
    form = SearchForm(request.GET or None)
    wanted = form.site_search() if form.is_bound and form.is_valid() else SiteSearch()
    page = page_number(request, max_page=MAX_SEARCH_PAGE)
    # An arXiv id pasted alone names one paper: a search from a form goes to its page, as
    # arXiv's own does; as-you-type results (htmx) name it instead of leaving the page.
    named_id = arxiv_id_named(wanted.query) if wanted.tab == "papers" else None
    named_paper = paper_named(named_id) if named_id else None
    if named_paper is not None and not wants_htmx_fragment(request):
        to_paper = redirect(named_paper.get_absolute_url())
        patch_vary_headers(to_paper, ["HX-Request", "HX-History-Restore-Request"])
        return to_paper
    results = site_search(
        wanted, offset=(page - 1) * PER_PAGE, limit=PER_PAGE, side_limit=SIDE_RESULTS
    )
    pager = None
    if wanted.query or (wanted.tab == "papers" and wanted.category):
        pager = search_window(
            request, results.main, page=page, per_page=PER_PAGE, max_page=MAX_SEARCH_PAGE
        )
    found = results.main
    words = [word for clause in parse_text(wanted.query) for word in clause.words]
    context = {
        "form": form,
        "query": wanted.query,
        "tab": wanted.tab,
        "category": wanted.category,
        "category_label": category_name(wanted.category) if wanted.category else "",
        "sort": wanted.sort,
        "sorts": SORTS,
        "mode": wanted.mode,
        "modes": MODES,
        "date_from": wanted.date_from,
        "date_to": wanted.date_to,
        "papers": found.items if wanted.tab == "papers" else [],
        "related": found.related if wanted.tab == "papers" else [],
        "related_limit": related_shown(len(found.items), PER_PAGE),
        "query_words": len(words),
        "suggested_words": results.suggested_words,
        "did_you_mean": results.spelling,
        "did_you_mean_url": _search_url(request, q=results.spelling.text)
        if results.spelling
        else "",
        "researchers": found.items if wanted.tab == "researchers" else results.researchers,
        "institutions": found.items if wanted.tab == "institutions" else results.institutions,
        "people": results.people,
        "pager": pager,
        "total": found.total if wanted.tab == "papers" and wanted.query else None,
        "total_is_capped": found.total_is_capped,
        "total_is_approximate": found.approximate,
        "by_meaning": found.by_meaning,
        "popular": popular_categories(),
        "named_id": named_id,
        "named_paper": named_paper,
        "tab_urls": {t: _search_url(request, tab=t) for t in TABS},
        # The export holds what this page lists: the same parameters, page included.
        "cite_query": f"?{request.GET.urlencode()}" if request.GET else "",
        # "Save this search" keeps what the search asks (words, mode, filters), not its page.
        "save_search_query": urlencode(
            {
                name: request.GET[name]
                for name in ("q", "mode", "category", "date_from", "date_to")
                if request.GET.get(name)
            }
        ),
    }
    # Words that name a researcher or an institution but appear in no paper lead with the names.
    context["names_lead"] = bool(
        wanted.query
        and wanted.tab == "papers"
        and not context["total"]
        and not context["papers"]
        and not context["related"]
        and (context["researchers"] or context["institutions"])
    )
    # A history restore asks for the whole page again, even though it comes from htmx.
    if wants_htmx_fragment(request) and not wants_markdown(request):
        response = render(request, "wovepaper/_search_results.html", context)
    else:
        response = render_page(request, "wovepaper/search", context)
    patch_vary_headers(response, ["HX-Request", "HX-History-Restore-Request"])
    return response


def search_citation(request: HttpRequest, extension: str) -> HttpResponse:
    """The papers of a search page as one citation file: `/search/cite.bib?<the page's query>`
    holds what that page lists (its PER_PAGE matches and their related papers)."""
    form = SearchForm(request.GET or None)
    wanted = form.site_search() if form.is_bound and form.is_valid() else SiteSearch()
    page = page_number(request, max_page=MAX_SEARCH_PAGE)
    papers = site_search_papers(wanted, offset=(page - 1) * PER_PAGE, limit=PER_PAGE)
    return citation_response(papers, extension=extension, filename="search")


def _search_url(request: HttpRequest, **changed: str) -> str:
    """This search's address from its first page, with `changed` parameters (another tab, the
    words spelt otherwise)."""
    params = request.GET.copy()
    params.pop("page", None)
    for name, value in changed.items():
        params[name] = value
    return f"{request.path}?{params.urlencode()}"


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


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler400: Django's page, except under /api/, where a malformed request (a body past
    DATA_UPLOAD_MAX_MEMORY_SIZE, too many fields) keeps the API's JSON error shape."""
    if not request.path.startswith("/api/"):
        return defaults.bad_request(request, exception or Exception())
    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        message = f"The request body is larger than the {limit:,} bytes an endpoint reads."
        return JsonResponse(error_body(413, "too_large", message), status=413)
    return JsonResponse(error_body(400, "bad_request", "The request is malformed."), status=400)


def admin_login(request: HttpRequest) -> HttpResponse:
    """The admin's sign-in page, replaced: staff sign in through allauth's, under its rate limits
    (failed sign-ins per address and per account), then come back to the admin page they asked
    for. Django's own admin login has no limit at all; it is never reached.

    A signed-in account without staff access is refused here rather than sent to sign in again
    (allauth would send it straight back, a redirect loop).
    """
    next_url = request.GET.get("next", "")
    if not (
        next_url.startswith("/admin/")
        and url_has_allowed_host_and_scheme(
            next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    ):
        next_url = reverse("admin:index")
    if request.user.is_authenticated:
        if request.user.is_active and request.user.is_staff:
            return redirect(next_url)
        raise PermissionDenied("This account has no access to the admin.")
    return redirect(f"{settings.LOGIN_URL}?{urlencode({'next': next_url})}")
