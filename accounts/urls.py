from __future__ import annotations

from django.urls import path

from wovepaper.lib.api.throttles import throttled_like_the_api

from . import alert_views, library_views, owner_views, views

app_name = "accounts"

urlpatterns = [
    path("accounts/", views.account_settings, name="settings"),
    path("accounts/export/", views.export, name="export"),
    path("accounts/delete/", views.delete_account, name="delete"),
    path("accounts/api-token/", views.api_token, name="api_token"),
    path("onboarding/", views.onboarding, name="onboarding"),
    path("onboarding/fields", views.onboarding_fields, name="onboarding_fields"),
    path("onboarding/researchers", views.onboarding_researchers, name="onboarding_researchers"),
    path("onboarding/claim", views.onboarding_claim, name="onboarding_claim"),
    path("onboarding/skip", views.onboarding_skip, name="onboarding_skip"),
    path("onboarding/finish", views.onboarding_finish, name="onboarding_finish"),
    path("me/state", views.me_state, name="me_state"),
    path("following", views.following, name="following"),
    path("following/researchers", views.followed_researchers, name="followed"),
    path("following/researchers/<int:researcher_id>/follow", views.follow, name="follow"),
    path("following/researchers/<int:researcher_id>/unfollow", views.unfollow, name="unfollow"),
    path("following/researchers/<int:researcher_id>/claim", views.claim, name="claim"),
    path(
        "following/institutions/<int:institution_id>/follow",
        views.follow_institution,
        name="follow_institution",
    ),
    path(
        "following/institutions/<int:institution_id>/unfollow",
        views.unfollow_institution,
        name="unfollow_institution",
    ),
    path("me/researchers/<int:researcher_id>", owner_views.owner_page, name="owner"),
    path(
        "me/researchers/<int:researcher_id>/not-mine", owner_views.owner_not_mine, name="not_mine"
    ),
    path(
        "me/researchers/<int:researcher_id>/mine-too", owner_views.owner_mine_too, name="mine_too"
    ),
    path(
        "me/researchers/<int:researcher_id>/propose-merge",
        owner_views.owner_propose_merge,
        name="propose_merge",
    ),
    path(
        "me/researchers/<int:researcher_id>/profile",
        owner_views.owner_profile,
        name="owner_profile",
    ),
    path("digest/unsubscribe/<str:token>", views.digest_unsubscribe, name="digest_unsubscribe"),
    path("me/library", library_views.library, name="library"),
    path("me/library/save", library_views.save, name="save"),
    path("me/library/unsave", library_views.unsave, name="unsave"),
    path("me/library/not-relevant", library_views.not_relevant, name="not_relevant"),
    path(
        "me/library/not-relevant/undo",
        library_views.not_relevant_undo,
        name="not_relevant_undo",
    ),
    path("me/library/<api_id:list_id>", library_views.library_list, name="library_list"),
    path(
        "me/library/<api_id:list_id>/cite.<cite_ext:extension>",
        throttled_like_the_api(library_views.library_cite),
        name="library_cite",
    ),
    path("me/library/<api_id:list_id>/rename", library_views.list_rename, name="list_rename"),
    path("me/library/<api_id:list_id>/import", library_views.list_import, name="list_import"),
    path("me/library/<api_id:list_id>/delete", library_views.list_delete, name="list_delete"),
    path("me/library/<api_id:list_id>/share", library_views.list_share, name="list_share"),
    path("me/library/<api_id:list_id>/unshare", library_views.list_unshare, name="list_unshare"),
    path(
        "me/library/<api_id:list_id>/papers/<api_id:paper_id>/note", library_views.note, name="note"
    ),
    path(
        "me/library/<api_id:list_id>/papers/<api_id:paper_id>/remove",
        library_views.remove,
        name="remove",
    ),
    path("lists/shared/<secret_token:token>", library_views.shared_list, name="shared_list"),
    path(
        "lists/shared/<secret_token:token>/cite.<cite_ext:extension>",
        throttled_like_the_api(library_views.shared_list_cite),
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
