from __future__ import annotations

from django.urls import path

from . import views

app_name = "researchers"

urlpatterns = [
    path("researchers", views.researcher_list, name="list"),
    path("researchers/<str:key>", views.researcher_detail, name="detail"),
]
