from django.contrib import admin
from django.urls import include, path, re_path, register_converter
from drf_spectacular.views import SpectacularJSONAPIView

from papers.converters import (
    ArxivIdConverter,
    CategoryConverter,
    CitationExtensionConverter,
    DataFileConverter,
    PaperKeyConverter,
)
from wovepaper import health, machine_readers, views
from wovepaper.lib.api.converters import (
    IdConverter,
    InstitutionKeyConverter,
    PageKeyConverter,
    SecretTokenConverter,
    WordPageKeyConverter,
)
from wovepaper.lib.api.errors import api_not_found
from wovepaper.lib.api.throttles import throttled_like_the_api
from wovepaper.sitemaps import sitemap_index, sitemap_section

# Before any include(): the apps' urlconfs use these converters.
register_converter(IdConverter, "api_id")
register_converter(InstitutionKeyConverter, "api_institution")
register_converter(ArxivIdConverter, "api_arxiv_id")
register_converter(PageKeyConverter, "page_key")
register_converter(WordPageKeyConverter, "word_page_key")
register_converter(PaperKeyConverter, "paper_key")
register_converter(CitationExtensionConverter, "cite_ext")
register_converter(SecretTokenConverter, "secret_token")
register_converter(CategoryConverter, "category")
register_converter(DataFileConverter, "data_file")

# The public API, version 1. Each app owns its routes; add new ones to this list, never after
# the catch-all below (which answers unknown /api/ URLs with the JSON error body).
api_v1 = [
    path("", include("papers.api.urls")),
    path("", include("researchers.api.urls")),
    path("", include("institutions.api.urls")),
    path("me/", include("accounts.api.urls")),
    path("me/", include("chat.api.urls")),
]

urlpatterns = [
    # Before the admin's own: staff sign in through allauth's rate-limited sign-in.
    path("admin/login/", views.admin_login, name="admin-login"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    re_path(r"^api/", api_not_found),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    path("developers", machine_readers.developers, name="developers"),
    path(
        "developers/reference",
        machine_readers.SwaggerView.as_view(url_name="openapi"),
        name="api-reference",
    ),
    path("developers/redoc", machine_readers.redoc_moved, name="api-redoc"),
    path("llms.txt", machine_readers.llms_txt, name="llms-txt"),
    path("robots.txt", machine_readers.robots_txt, name="robots-txt"),
    path("health", health.health, name="health"),
    path("favicon.ico", machine_readers.favicon, name="favicon"),
    path("data/<data_file:name>", machine_readers.identity_links, name="data-identity-links"),
    path("sitemap.xml", sitemap_index, name="sitemap-index"),
    path("sitemap-<slug:section>.xml", sitemap_section, name="sitemap-section"),
    path("", views.home, name="home"),
    path("search", views.search, name="search"),
    path(
        "search/cite.<cite_ext:extension>",
        throttled_like_the_api(views.search_citation),
        name="search-cite",
    ),
    path("categories/<category:code>", views.category, name="category"),
    path("about", views.about, name="about"),
    path("contact", views.contact, name="contact"),
    path("privacy", views.privacy, name="privacy"),
    path("", include("papers.urls")),
    path("", include("researchers.urls")),
    path("", include("institutions.urls")),
    path("", include("accounts.urls")),
    path("", include("chat.urls")),
    path("accounts/", include("allauth.urls")),
]

handler400 = "wovepaper.views.bad_request"
handler404 = "wovepaper.views.page_not_found"
handler500 = "wovepaper.health.server_error"
