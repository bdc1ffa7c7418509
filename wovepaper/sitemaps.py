"""/sitemap.xml: an index over sitemap files of every paper, researcher and institution page.

With 2.6M papers, Django's default sitemap paging (COUNT(*) then OFFSET n) would count the whole
table on every request and scan past millions of rows for the last files. Here file N of a
section holds the rows whose id falls in ((N-1)*size, N*size]: one indexed range scan, no count,
at most `size` URLs (ids are unique), reading only the columns a URL needs. Id ranges
with no rows (ids burned by upserts) get no file: the index lists the ranges that have rows,
found with one grouped pass per table that also gives each file its lastmod, and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

from django.conf import settings
from django.contrib.sitemaps import Sitemap
from django.contrib.sitemaps.views import SitemapIndexItem
from django.core.cache import cache
from django.core.paginator import EmptyPage, PageNotAnInteger, Paginator
from django.db.models import F, Max, Model, QuerySet
from django.http import Http404, HttpRequest, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import http_date

from institutions.models import Institution
from papers.models import Paper
from researchers.models import Researcher


@dataclass
class IdRangePage:
    object_list: QuerySet


class IdRangePaginator:
    """Page N is the rows with id in ((N-1)*size, N*size]; an empty range is EmptyPage."""

    def __init__(self, queryset: QuerySet, size: int):
        self.queryset = queryset
        self.size = size

    def page(self, number) -> IdRangePage:
        try:
            number = int(number)
        except (TypeError, ValueError):
            raise PageNotAnInteger("That page number is not an integer") from None
        # Ids are 64-bit: beyond that no range can hold rows.
        if number < 1 or (number - 1) * self.size >= 2**63:
            raise EmptyPage("That page number is out of range")
        low = (number - 1) * self.size
        rows = self.queryset.filter(id__gt=low, id__lte=low + self.size).order_by("id")
        if not rows.exists():
            raise EmptyPage("That page contains no results")
        return IdRangePage(object_list=rows)


def row_class(model, fields: tuple[str, ...]) -> type:
    """A slotted stand-in for `model` with only `fields`, borrowing the model's own URL
    members (`url_slug`, `get_absolute_url` and whatever helper that calls, such as a static
    `path_for`): building 50,000 of these costs a fraction of 50,000 model instances, and the
    URLs cannot drift from the model's."""
    borrowed = {
        name: vars(model)[name]
        for name in ("url_slug", "get_absolute_url", "path_for")
        if name in vars(model)
    }
    return type(f"{model.__name__}SitemapRow", (), {"__slots__": (*fields, "pk"), **borrowed})


class IdRangeSitemap(Sitemap):
    section = ""
    model: type[Model] | None = None
    fields: tuple[str, ...] = ()

    def items(self) -> QuerySet[Any]:
        raise NotImplementedError

    def rows(self, queryset: QuerySet):
        """The page's rows, streamed from a cursor as row objects."""
        row_type = row_class(self.model, self.fields)
        for values in queryset.values_list(*self.fields).iterator(chunk_size=2000):
            row = row_type()
            for name, value in zip(self.fields, values, strict=True):
                setattr(row, name, value)
            row.pk = row.id
            yield row

    # Read per request, so that tests and operators can change it; django-stubs declare Sitemap's
    # `limit` a plain attribute.
    @property
    def limit(self) -> int:  # type: ignore[override]
        return settings.SITEMAP_PAGE_SIZE

    # Django's Sitemap.paginator is a property too (django-stubs declare an attribute), and
    # Django reads only page() and num_pages of what it returns.
    @property
    def paginator(self) -> IdRangePaginator:  # type: ignore[override]
        return IdRangePaginator(self.items(), self.limit)

    def lastmod(self, item) -> datetime:
        return item.modified_at

    def get_protocol(self, protocol=None) -> str:
        return urlsplit(settings.SITE_URL).scheme or "https"

    def get_domain(self, site=None) -> str:
        # SITE_URL is the canonical host, whatever the Site row or the request's Host says.
        return urlsplit(settings.SITE_URL).netloc

    def files(self) -> list[tuple[int, datetime | None]]:
        """(page number, newest lastmod) for every id range that holds rows, cached."""
        key = f"sitemap-files:{self.section}:{self.limit}"
        cached = cache.get(key)
        if cached is not None:
            return cached
        rows = (
            self.items()
            .order_by()
            .annotate(bucket=(F("id") - 1) / self.limit)
            .values("bucket")
            .annotate(newest=Max("modified_at"))
            .order_by("bucket")
        )
        files = [(row["bucket"] + 1, row["newest"]) for row in rows]
        cache.set(key, files, settings.SITEMAP_INDEX_CACHE_SECONDS)
        return files


class PaperSitemap(IdRangeSitemap):
    section = "papers"
    model = Paper
    fields = ("id", "arxiv_id", "slug", "modified_at")

    def items(self) -> QuerySet[Paper]:
        return Paper.objects.filter(is_deleted=False).only(*self.fields)


class ResearcherSitemap(IdRangeSitemap):
    section = "researchers"
    model = Researcher
    fields = ("id", "slug", "modified_at")

    def items(self) -> QuerySet[Researcher]:
        # Merged records redirect to their survivor: only survivors are pages of their own. A
        # page its owner hid from lists and search stays out of the sitemap too.
        return Researcher.objects.filter(
            merged_into__isnull=True, is_person=True, hidden=False
        ).only(*self.fields)


class InstitutionSitemap(IdRangeSitemap):
    section = "institutions"
    model = Institution
    fields = ("id", "slug", "modified_at")

    def items(self) -> QuerySet[Institution]:
        return Institution.objects.only(*self.fields)


class SitePagesSitemap(IdRangeSitemap):
    """The site's own pages (the lists and the pages about the site), one short file."""

    section = "pages"
    PATHS = ["/", "/researchers", "/institutions", "/about", "/contact", "/privacy", "/developers"]

    @property
    def paginator(self) -> Paginator:  # type: ignore[override]  # a fixed list, as Django pages
        return Paginator(self.PATHS, 50_000)

    def items(self) -> list[str]:  # type: ignore[override]  # paths, not rows
        return self.PATHS

    def location(self, item: str) -> str:
        return item

    def lastmod(self, item):
        return None

    def files(self) -> list[tuple[int, datetime | None]]:
        return [(1, None)]


SITEMAPS = {
    "pages": SitePagesSitemap,
    "papers": PaperSitemap,
    "researchers": ResearcherSitemap,
    "institutions": InstitutionSitemap,
}


def sitemap_index(request: HttpRequest) -> TemplateResponse:
    """The index: one entry per sitemap file that has URLs, with its newest lastmod."""
    entries, newest = [], None
    for section, sitemap_class in SITEMAPS.items():
        sitemap = sitemap_class()
        location = settings.SITE_URL + reverse("sitemap-section", kwargs={"section": section})
        for number, lastmod in sitemap.files():
            # Django annotates last_mod as bool; its template prints the datetime given here.
            entries.append(SitemapIndexItem(f"{location}?p={number}", lastmod))  # type: ignore[arg-type]
            if lastmod and (newest is None or lastmod > newest):
                newest = lastmod
    headers = {"Last-Modified": http_date(newest.timestamp())} if newest else None
    return TemplateResponse(
        request,
        "sitemap_index.xml",
        {"sitemaps": entries},
        content_type="application/xml",
        headers=headers,
    )


def sitemap_section(request: HttpRequest, section: str) -> StreamingHttpResponse:
    """One sitemap file (`?p=N`), streamed row by row from a database cursor.

    Rendering 50,000 URLs through the template engine takes tens of seconds and holds every
    row; writing the XML as the rows arrive keeps memory flat and takes a fraction of that.
    """
    if section not in SITEMAPS:
        raise Http404("No such sitemap.")
    sitemap = SITEMAPS[section]()
    try:
        rows = sitemap.paginator.page(request.GET.get("p", 1)).object_list
    except (EmptyPage, PageNotAnInteger):
        raise Http404("No such sitemap page.") from None
    prefix = f"{sitemap.get_protocol()}://{sitemap.get_domain()}"
    items = sitemap.rows(rows) if isinstance(rows, QuerySet) else rows

    def xml():
        chunk = [
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        ]
        for item in items:
            entry = f"<url><loc>{escape(prefix + sitemap.location(item))}</loc>"
            lastmod = sitemap.lastmod(item)
            if lastmod is not None:
                stamp = lastmod.astimezone(UTC).isoformat(timespec="seconds")
                entry += f"<lastmod>{stamp}</lastmod>"
            chunk.append(entry + "</url>\n")
            # Written out in blocks: one response chunk per URL costs more than the URL.
            if len(chunk) >= 1000:
                yield "".join(chunk)
                chunk = []
        chunk.append("</urlset>\n")
        yield "".join(chunk)

    return StreamingHttpResponse(xml(), content_type="application/xml; charset=utf-8")
