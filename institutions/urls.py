from __future__ import annotations

from django.urls import path

from . import views

app_name = "institutions"

urlpatterns = [
    path("institutions", views.institution_list, name="list"),
    path("institutions/<word_page_key:pk>", views.institution_detail, name="detail"),
    path("institutions/<path:key>", views.institution_detail, name="lookup"),
]
