from __future__ import annotations

from django.urls import path

from . import views

app_name = "papers"

urlpatterns = [
    path("papers/<paper_key:arxiv_id>", views.paper_detail, name="detail"),
]
