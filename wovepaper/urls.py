from django.contrib import admin
from django.urls import include, path

from . import views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", views.home, name="home"),
    path("search", views.search, name="search"),
    path("about", views.about, name="about"),
    path("contact", views.contact, name="contact"),
    path("privacy", views.privacy, name="privacy"),
    path("", include("papers.urls")),
    path("", include("researchers.urls")),
    path("", include("institutions.urls")),
    path("", include("accounts.urls")),
    path("accounts/", include("allauth.urls")),
    path("api/v1/me/", include("accounts.api.urls")),
]

handler404 = "wovepaper.views.page_not_found"
