"""allauth hooks: every new account gets a profile and goes to onboarding first."""

from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from django.http import HttpRequest
from django.urls import reverse

from .models import Profile
from .services import profile_create_for_signup


def _onboarding_pending(user) -> bool:
    return Profile.objects.filter(user=user, onboarding=Profile.Onboarding.PENDING).exists()


class AccountAdapter(DefaultAccountAdapter):
    def save_user(self, request: HttpRequest, user, form, commit: bool = True):
        user = super().save_user(request, user, form, commit=commit)
        if commit:
            profile_create_for_signup(user=user)
        return user

    def get_signup_redirect_url(self, request: HttpRequest) -> str:
        return reverse("accounts:onboarding")

    def get_login_redirect_url(self, request: HttpRequest) -> str:
        if _onboarding_pending(request.user):
            return reverse("accounts:onboarding")
        return super().get_login_redirect_url(request)


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def save_user(self, request: HttpRequest, sociallogin, form=None):
        user = super().save_user(request, sociallogin, form=form)
        profile_create_for_signup(user=user)
        return user
