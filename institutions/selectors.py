"""Reads for institution pages and lists, each a fixed number of indexed queries."""

from __future__ import annotations

import re

from django.db.models import Q, QuerySet

from papers.models import Paper
from papers.selectors import listed, papers_with_short_bylines
from wovepaper.lib.search.orm import each_word
from wovepaper.lib.text import folded_words

from .models import AuthorshipInstitution, Institution

# ROR ids are 9 characters: a leading 0, six Crockford base32 characters and two check digits.
ROR_ID = re.compile(
    r"^(?:https?:/+)?(?:www\.)?(?:ror\.org/|ror[:/])?(0[0-9a-hjkmnp-tv-z]{6}\d{2})/?$",
    re.IGNORECASE,
)
OPENALEX_ID = re.compile(r"^(?:https?:/+)?(?:openalex\.org/)?(I\d{1,15})$", re.IGNORECASE)

LIST_SORTS = {"papers": ("-paper_count", "id"), "name": ("name", "id")}
# The API's order for institution lists, the pages' default.
INSTITUTION_ORDERING = LIST_SORTS["papers"]


def institution_lookup(key: str) -> Institution | None:
    """Find an institution by ROR id (bare, ror/…, or full URL), OpenAlex id or exact name."""
    key = key.strip()
    match = ROR_ID.match(key)
    if match:
        found = Institution.objects.filter(ror_id=match[1].lower()).first()
        if found:
            return found
    match = OPENALEX_ID.match(key)
    if match:
        openalex = match[1].upper()
        found = Institution.objects.filter(
            openalex_id__in=[openalex, f"https://openalex.org/{openalex}"]
        ).first()
        if found:
            return found
    if not key or len(key) > 255 or "\x00" in key:
        # PostgreSQL cannot compare text holding NUL (DataError); no name holds one.
        return None
    return Institution.objects.filter(name__iexact=key).order_by("-paper_count", "id").first()


def institution_papers(institution: Institution, *, offset: int = 0, limit: int = 24) -> list:
    papers = listed(
        Paper.objects.filter(
            pk__in=AuthorshipInstitution.objects.filter(institution=institution).values("paper_id")
        )
    ).order_by("-published", "-id")
    return papers_with_short_bylines(papers[offset : offset + limit])


def institutions_listed(*, country: str = "") -> QuerySet[Institution]:
    """Every institution, or those of one country (ISO code, any case); unordered."""
    qs: QuerySet[Institution] = Institution.objects.all()
    if country:
        qs = qs.filter(country_code=country.upper())
    return qs


def institutions_named(text: str, *, or_ror_id: bool = False) -> QuerySet[Institution]:
    """Institutions whose folded name holds each folded word of `text` ("zurich" finds "ETH
    Zürich"; a trigram index on PostgreSQL), unordered; with `or_ror_id`, also the one whose ROR
    id `text` is. The search pages' database backend and the API's search both read this."""
    words = folded_words(" ".join(text.split())).split()
    match = each_word("folded_name__contains", words) if words else Q(pk__in=[])
    ror = ROR_ID.match(text.strip()) if or_ror_id else None
    if ror:
        match |= Q(ror_id=ror[1].lower())
    return Institution.objects.filter(match)


def institutions_browse(
    *, sort: str = "papers", country: str = "", offset: int = 0, limit: int = 50
) -> list[Institution]:
    qs = institutions_listed(country=country)
    return list(qs.order_by(*LIST_SORTS.get(sort, LIST_SORTS["papers"]))[offset : offset + limit])


def institution_get(key: str | int) -> Institution | None:
    """The institution with this database id or ROR id (bare, e.g. `042nb2s44`), or None."""
    key = str(key).strip()
    match = ROR_ID.match(key)
    if match:
        return Institution.objects.filter(ror_id=match[1].lower()).first()
    if key.isdigit() and len(key) <= 18:
        return Institution.objects.filter(pk=int(key)).first()
    return None


def authorship_institutions_of_paper(paper_id: int) -> dict[int, list[Institution]]:
    """{authorship id: its institutions by name} for one paper, in one query (the paper page)."""
    institutions: dict[int, list[Institution]] = {}
    for row in (
        AuthorshipInstitution.objects.filter(paper_id=paper_id)
        .select_related("institution")
        .order_by("institution__name", "pk")
    ):
        institutions.setdefault(row.authorship_id, []).append(row.institution)
    return institutions


def institution_paper_ids(institution_id: int) -> QuerySet:
    """The ids of the papers with an authorship affiliated to this institution, as a subquery."""
    return AuthorshipInstitution.objects.filter(institution_id=institution_id).values("paper_id")
