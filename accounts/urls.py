from __future__ import annotations

from django.urls import path

from . import digest_views, owner_views, views
from .library import urls as library_urls

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
    path("me/digest", digest_views.digest_preview, name="digest_preview"),
    *library_urls.urlpatterns,
]
