from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerView

from wovepaper.api import api_not_found

# The public API, version 1. Each app owns its routes; add new ones to this list, never after
# the catch-all below (which answers unknown /api/ URLs with the JSON error body).
api_v1 = [
    path("", include("papers.api.urls")),
    path("", include("researchers.api.urls")),
    path("", include("institutions.api.urls")),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    re_path(r"^api/", api_not_found),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    path("developers/reference", SpectacularSwaggerView.as_view(url_name="openapi"),
         name="api-reference"),
]
