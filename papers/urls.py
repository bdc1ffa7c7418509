from __future__ import annotations

from django.urls import path

from . import views

app_name = "papers"

urlpatterns = [
    path("papers/<path:key>", views.paper_detail, name="detail"),
]
