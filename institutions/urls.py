from __future__ import annotations

from django.urls import include, path

from . import views
from .feeds import InstitutionAtomFeed, InstitutionFeed

# The pages are named under "institutions:"; the feeds keep the site-wide names they had before
# they moved here from wovepaper/urls.py, so this module sets no app_name. The feeds come first:
# the lookup's <path:key> would take their paths.
institution_urlpatterns = [
    path("institutions", views.institution_list, name="list"),
    path("institutions/<word_page_key:pk>", views.institution_detail, name="detail"),
    path("institutions/<path:key>", views.institution_detail, name="lookup"),
]

urlpatterns = [
    path("institutions/<api_id:pk>/feed.rss", InstitutionFeed(), name="feed-institution-rss"),
    path("institutions/<api_id:pk>/feed.atom", InstitutionAtomFeed(), name="feed-institution-atom"),
    path("", include((institution_urlpatterns, "institutions"))),
]
