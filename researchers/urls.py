from __future__ import annotations

from django.urls import path

from . import report_views, views

app_name = "researchers"

urlpatterns = [
    path("researchers", views.researcher_list, name="list"),
    path("researchers/report", report_views.match_report, name="report"),
    path("researchers/<page_key:pk>", views.researcher_detail, name="detail"),
]
