from __future__ import annotations

import re

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse

from wovepaper.lib.api.redirects import permanent_redirect
from wovepaper.lib.negotiation import render_page
from wovepaper.lib.pagecache import cache_public_page, page_shows
from wovepaper.lib.paging import query_choice, window
from wovepaper.lib.structured_data import jsonld_with_breadcrumbs

from . import selectors
from .models import Institution

COUNTRY = re.compile(r"^[A-Za-z]{2}$")
PER_PAGE = 24


@cache_public_page(query=["page"])
def institution_detail(request: HttpRequest, pk: int | None = None, key: str = "") -> HttpResponse:
    """The page of the institution with id `pk` (`/institutions/<id>-<slug>`), or of the one
    `key` names (a ROR id or URL, an OpenAlex id, a name), redirected to its canonical URL."""
    if pk is not None:
        institution = Institution.objects.filter(pk=pk).first()
    else:
        institution = selectors.institution_lookup(key)
    if institution is None:
        raise Http404("no such institution")
    page_shows(request, "institution", institution.pk)
    canonical = institution.get_absolute_url()
    if request.path != canonical:
        return permanent_redirect(canonical, request)

    pager = window(
        request,
        lambda offset, limit: selectors.institution_papers(institution, offset=offset, limit=limit),
        per_page=PER_PAGE,
    )
    if institution.paper_count:
        pager.total_pages = -(-institution.paper_count // PER_PAGE)
    return render_page(
        request,
        "institutions/detail",
        {
            "institution": institution,
            "pager": pager,
            "papers": pager.items,
            "jsonld": _institution_jsonld(institution),
        },
    )


def _institution_jsonld(institution: Institution) -> dict:
    url = settings.SITE_URL + institution.get_absolute_url()
    org: dict = {
        "@type": "Organization",
        "@id": url + "#organization",
        "name": institution.name,
        "url": url,
    }
    if institution.other_names:
        org["alternateName"] = [str(n) for n in institution.other_names][:10]
    same_as = [institution.ror_url] if institution.ror_id else []
    if institution.openalex_id:
        same_as.append(
            institution.openalex_id
            if institution.openalex_id.startswith("http")
            else f"https://openalex.org/{institution.openalex_id}"
        )
    if same_as:
        org["sameAs"] = same_as
    if institution.country_code:
        org["address"] = {"@type": "PostalAddress", "addressCountry": institution.country_code}
    return jsonld_with_breadcrumbs(
        org,
        [
            ("Institutions", "/institutions"),
            (institution.name, institution.get_absolute_url()),
        ],
    )


def institution_list(request: HttpRequest) -> HttpResponse:
    sort = query_choice(request, "sort", selectors.LIST_SORTS, default="papers")
    country = request.GET.get("country", "").strip()
    country = country.upper() if COUNTRY.match(country) else ""
    pager = window(
        request,
        lambda offset, limit: selectors.institutions_browse(
            sort=sort, country=country, offset=offset, limit=limit
        ),
        per_page=50,
    )
    return render_page(
        request,
        "institutions/list",
        {
            "pager": pager,
            "institutions": pager.items,
            "sort": sort,
            "country": country,
            "sorts": [("papers", "Papers here"), ("name", "Name")],
        },
    )
