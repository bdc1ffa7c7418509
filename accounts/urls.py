from __future__ import annotations

from django.urls import path

from . import digest_views, feed_views, follow_views, onboarding_views, reader_state, settings_views
from .library import urls as library_urls
from .ownership import claim_views, correction_views

app_name = "accounts"

urlpatterns = [
    path("accounts/", settings_views.account_settings, name="settings"),
    path("accounts/export/", settings_views.export, name="export"),
    path("accounts/delete/", settings_views.delete_account, name="delete"),
    path("accounts/api-token/", settings_views.api_token, name="api_token"),
    path("onboarding/", onboarding_views.onboarding, name="onboarding"),
    path("onboarding/fields", onboarding_views.onboarding_fields, name="onboarding_fields"),
    path(
        "onboarding/researchers",
        onboarding_views.onboarding_researchers,
        name="onboarding_researchers",
    ),
    path("onboarding/claim", onboarding_views.onboarding_claim, name="onboarding_claim"),
    path("onboarding/skip", onboarding_views.onboarding_skip, name="onboarding_skip"),
    path("onboarding/finish", onboarding_views.onboarding_finish, name="onboarding_finish"),
    path("me/state", reader_state.me_state, name="me_state"),
    path("following", feed_views.following, name="following"),
    path("following/researchers", follow_views.followed_researchers, name="followed"),
    path("following/researchers/<int:researcher_id>/follow", follow_views.follow, name="follow"),
    path(
        "following/researchers/<int:researcher_id>/unfollow", follow_views.unfollow, name="unfollow"
    ),
    path("following/researchers/<int:researcher_id>/claim", claim_views.claim, name="claim"),
    path(
        "following/institutions/<int:institution_id>/follow",
        follow_views.follow_institution,
        name="follow_institution",
    ),
    path(
        "following/institutions/<int:institution_id>/unfollow",
        follow_views.unfollow_institution,
        name="unfollow_institution",
    ),
    path("me/researchers/<int:researcher_id>", correction_views.owner_page, name="owner"),
    path(
        "me/researchers/<int:researcher_id>/not-mine",
        correction_views.owner_not_mine,
        name="not_mine",
    ),
    path(
        "me/researchers/<int:researcher_id>/mine-too",
        correction_views.owner_mine_too,
        name="mine_too",
    ),
    path(
        "me/researchers/<int:researcher_id>/propose-merge",
        correction_views.owner_propose_merge,
        name="propose_merge",
    ),
    path(
        "me/researchers/<int:researcher_id>/profile",
        correction_views.owner_profile,
        name="owner_profile",
    ),
    path(
        "digest/unsubscribe/<str:token>", digest_views.digest_unsubscribe, name="digest_unsubscribe"
    ),
    path("me/digest", digest_views.digest_preview, name="digest_preview"),
    *library_urls.urlpatterns,
]
