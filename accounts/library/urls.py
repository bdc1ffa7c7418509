"""The library's pages, under the `accounts` namespace (accounts/urls.py takes them in)."""

from __future__ import annotations

from django.urls import path

from wovepaper.lib.api.throttles import throttled_like_the_api

from . import alert_views, import_views, list_views, recommendation_views

urlpatterns = [
    path("me/library", list_views.library, name="library"),
    path("me/library/save", list_views.save, name="save"),
    path("me/library/unsave", list_views.unsave, name="unsave"),
    path("me/library/not-relevant", recommendation_views.not_relevant, name="not_relevant"),
    path(
        "me/library/not-relevant/undo",
        recommendation_views.not_relevant_undo,
        name="not_relevant_undo",
    ),
    path("me/library/<api_id:list_id>", list_views.library_list, name="library_list"),
    path(
        "me/library/<api_id:list_id>/cite.<cite_ext:extension>",
        throttled_like_the_api(list_views.library_cite),
        name="library_cite",
    ),
    path("me/library/<api_id:list_id>/rename", list_views.list_rename, name="list_rename"),
    path("me/library/<api_id:list_id>/import", import_views.list_import, name="list_import"),
    path(
        "me/library/<api_id:list_id>/imports/<api_id:job_id>",
        import_views.list_import_job,
        name="list_import_job",
    ),
    path("me/library/<api_id:list_id>/delete", list_views.list_delete, name="list_delete"),
    path("me/library/<api_id:list_id>/share", list_views.list_share, name="list_share"),
    path("me/library/<api_id:list_id>/unshare", list_views.list_unshare, name="list_unshare"),
    path("me/library/<api_id:list_id>/papers/<api_id:paper_id>/note", list_views.note, name="note"),
    path(
        "me/library/<api_id:list_id>/papers/<api_id:paper_id>/remove",
        list_views.remove,
        name="remove",
    ),
    path("lists/shared/<secret_token:token>", list_views.shared_list, name="shared_list"),
    path(
        "lists/shared/<secret_token:token>/cite.<cite_ext:extension>",
        throttled_like_the_api(list_views.shared_list_cite),
        name="shared_list_cite",
    ),
    path("me/searches", alert_views.saved_searches, name="saved_searches"),
    path(
        "me/searches/<api_id:search_id>/delete",
        alert_views.saved_search_delete,
        name="saved_search_delete",
    ),
    path("me/searches/feed/reset", alert_views.alert_feed_reset, name="alert_feed_reset"),
    path(
        "me/alerts/<secret_token:token>.atom", alert_views.alert_feed_atom, name="alert_feed_atom"
    ),
    path("me/alerts/<secret_token:token>.rss", alert_views.alert_feed_rss, name="alert_feed_rss"),
]
