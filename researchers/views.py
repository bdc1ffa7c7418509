from __future__ import annotations

import math

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse

from institutions.models import Institution
from papers.citations.export import citation_response
from papers.citations.lists import author_citations_per_year, author_cited_within_archive
from papers.taxonomy import category_name
from wovepaper.lib.api.redirects import permanent_redirect
from wovepaper.lib.identifiers import CATEGORY_CODE_WHOLE
from wovepaper.lib.negotiation import render_page
from wovepaper.lib.pagecache import cache_public_page, page_shows
from wovepaper.lib.paging import query_choice, window
from wovepaper.lib.structured_data import jsonld_with_breadcrumbs

from . import selectors
from .coauthors import coauthor_graph, coauthor_path
from .curation import identity
from .institution_members import institution_members
from .models import Researcher
from .similar import similar_researchers

PER_PAGE = 24
CURATE_PERMISSION = "researchers.curate_researcher"
FIELDS_SHOWN = 12
# Co-authors listed before the rest fold away.
COAUTHORS_OPEN = 24
POSITIONS = [
    ("first", "First author"),
    ("middle", "Middle author"),
    ("last", "Last author"),
    ("sole", "Sole author"),
]


# A researcher's export holds their newest papers up to this many, and says so when cut.
CITATION_EXPORT_MAX = 1000


def researcher_citation(request: HttpRequest, pk: int, extension: str) -> HttpResponse:
    """A researcher's papers as one citation file, newest first: `/researchers/<id>/cite.bib`."""
    researcher, merged = selectors.researcher_resolve(pk)
    if researcher is None:
        raise Http404("no such researcher")
    if merged:
        return permanent_redirect(
            reverse("researchers:cite", args=[researcher.pk, extension]), request
        )
    papers, cut_note = selectors.researcher_citation_export(researcher, limit=CITATION_EXPORT_MAX)
    return citation_response(
        papers,
        extension=extension,
        filename=f"researcher-{researcher.pk}",
        cut_note=cut_note,
    )


@cache_public_page(query=["category", "sort", "page"])
def researcher_detail(request: HttpRequest, pk: int) -> HttpResponse:
    researcher, merged = selectors.researcher_resolve(pk)
    if researcher is None:
        raise Http404("no such researcher")
    page_shows(request, "researcher", researcher.pk)
    canonical = researcher.get_absolute_url()
    if merged or request.path != canonical:
        return permanent_redirect(canonical, request)

    category = request.GET.get("category", "").strip()
    if category and not CATEGORY_CODE_WHOLE.match(category):
        category = ""
    sort = query_choice(request, "sort", selectors.PAPER_SORTS, default="newest")
    pager = window(
        request,
        lambda offset, limit: selectors.researcher_papers(
            researcher, category=category, sort=sort, offset=offset, limit=limit
        ),
        per_page=PER_PAGE,
    )
    expected = researcher.field_counts.get(category) if category else researcher.paper_count
    if expected:
        pager.total_pages = math.ceil(expected / PER_PAGE)

    coauthors = [
        {**c, "url": coauthor_path(c) if c.get("id") else ""}
        for c in researcher.coauthors or []
        if isinstance(c, dict)
    ]
    panel = identity.researcher_identity_panel(researcher)
    context = {
        "researcher": researcher,
        "pager": pager,
        "papers": pager.items,
        "category": category,
        "category_label": category_name(category) if category else "",
        "sort": sort,
        "sorts": [("newest", "Newest"), ("oldest", "Oldest"), ("cited", "Most cited")],
        "positions": _position_bars(researcher),
        "fields": _field_bars(researcher, category),
        "same_name": identity.researcher_same_name_explained(researcher),
        "identity_panel": panel,
        "history": identity.researcher_public_history(researcher),
        "coauthors": coauthors,
        "coauthors_open": coauthors[:COAUTHORS_OPEN],
        "coauthors_folded": coauthors[COAUTHORS_OPEN:],
        "graph": coauthor_graph(coauthors),
        "other_cited_papers": max(researcher.cited_papers_count - 1, 0),
        # The docked chat asks about this researcher's papers.
        "chat_scope": f"researcher:{researcher.pk}",
        "similar": similar_researchers(researcher),
        "affiliation": selectors.researcher_latest_affiliation(researcher),
        "citations_per_year": author_citations_per_year(researcher.pk),
        "cited_within": author_cited_within_archive(researcher.pk),
    }
    records = panel.records
    context["figures_source"] = _figures_source(researcher, records)
    context["jsonld"] = _researcher_jsonld(researcher, records)
    # Curators only: anonymous visitors and readers run no extra query for this.
    user = request.user
    if user.is_authenticated and user.is_staff and user.has_perm(CURATE_PERMISSION):
        context["curation_history"] = selectors.researcher_curation_history(researcher)
    return render_page(request, "researchers/detail", context)


def _position_bars(researcher: Researcher) -> list[dict]:
    counts = researcher.position_counts or {}
    if not researcher.position_basis or not counts:
        return []
    top = max((counts.get(k, 0) for k, _ in POSITIONS), default=0) or 1
    return [
        {
            "key": key,
            "label": label,
            "count": counts.get(key, 0),
            "pct": round(100 * counts.get(key, 0) / top),
        }
        for key, label in POSITIONS
        if key != "sole" or counts.get("sole")
    ]


def _field_bars(researcher: Researcher, active: str) -> list[dict]:
    counts = researcher.field_counts or {}
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    shown = ranked[:FIELDS_SHOWN]
    if active and active in counts and all(code != active for code, _ in shown):
        shown.append((active, counts[active]))
    top = max((n for _, n in shown), default=0) or 1
    return [
        {
            "code": code,
            "name": category_name(code),
            "count": n,
            "pct": round(100 * n / top),
            "active": code == active,
        }
        for code, n in shown
    ]


def _figures_source(researcher: Researcher, records: list[identity.SourceRecord]) -> dict | None:
    """The source of the stored figures by name, with its record of this researcher."""
    if not researcher.figures_source:
        return None
    source = researcher.figures_source
    return {
        "name": identity.SOURCE_LABELS.get(source, source),
        "url": next((r.url for r in records if r.source == source and r.url), ""),
    }


def _researcher_jsonld(researcher: Researcher, identities: list[identity.SourceRecord]) -> dict:
    url = settings.SITE_URL + researcher.get_absolute_url()
    person: dict = {
        "@type": "Person",
        "@id": url + "#person",
        "name": researcher.display_name,
        "url": url,
        "mainEntityOfPage": url,
    }
    same_as = [i.url for i in identities if i.url]
    if same_as:
        person["sameAs"] = same_as
    orcid = [i.value for i in identities if i.source == "orcid"]
    if orcid:
        person["identifier"] = {"@type": "PropertyValue", "propertyID": "ORCID", "value": orcid[0]}
    return jsonld_with_breadcrumbs(
        person,
        [
            ("Researchers", "/researchers"),
            (researcher.display_name, researcher.get_absolute_url()),
        ],
    )


def researcher_list(request: HttpRequest) -> HttpResponse:
    sort = query_choice(request, "sort", selectors.LIST_SORTS, default="papers")
    pager = window(
        request,
        lambda offset, limit: selectors.researchers_browse(sort=sort, offset=offset, limit=limit),
        per_page=50,
    )
    return render_page(
        request,
        "researchers/list",
        {
            "pager": pager,
            "researchers": pager.items,
            "sort": sort,
            "sorts": [("papers", "Papers here"), ("h_index", "h-index"), ("name", "Name")],
        },
    )


INSTITUTION_RESEARCHERS_PER_PAGE = 50


@cache_public_page(query=["page"])
def institution_researchers(request: HttpRequest, pk: int) -> HttpResponse:
    """Every listed researcher on an institution's bylines, most papers there first: the list
    whose length the institution's page states (researchers.institution_members)."""
    institution = Institution.objects.filter(pk=pk).first()
    if institution is None:
        raise Http404("no such institution")
    page_shows(request, "institution", institution.pk)
    canonical = institution.get_absolute_url() + "/researchers"
    if request.path != canonical:
        return permanent_redirect(canonical, request)
    pager = window(
        request,
        lambda offset, limit: institution_members(institution, offset=offset, limit=limit),
        per_page=INSTITUTION_RESEARCHERS_PER_PAGE,
    )
    pager.total_pages = max(1, -(-institution.researcher_count // INSTITUTION_RESEARCHERS_PER_PAGE))
    return render_page(
        request,
        "researchers/institution_researchers",
        {
            "institution": institution,
            "pager": pager,
            "members": pager.items,
            "jsonld": jsonld_with_breadcrumbs(
                {
                    "@type": "CollectionPage",
                    "name": f"Researchers of {institution.name}",
                    "url": settings.SITE_URL + canonical,
                },
                [
                    ("Institutions", "/institutions"),
                    (institution.name, institution.get_absolute_url()),
                    ("Researchers", canonical),
                ],
            ),
        },
    )
