"""allauth hooks: every new account gets a profile and lands on the chat, which offers the
onboarding steps: signing in is what unlocks chat with the papers, as on the reference site.
After that, readers go where they asked; every page offers the unfinished setup in a banner
(templates/includes/onboarding_banner.html) rather than sending them away."""

from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from django.http import HttpRequest
from django.urls import reverse
from rest_framework.throttling import BaseThrottle

from .account_data import superuser_address_confirm
from .onboarding import onboarding_pending
from .profiles import profile_create_for_signup


class AccountAdapter(DefaultAccountAdapter):
    def save_user(self, request: HttpRequest, user, form, commit: bool = True):
        user = super().save_user(request, user, form, commit=commit)
        if commit:
            profile_create_for_signup(user=user)
        return user

    def get_client_ip(self, request: HttpRequest) -> str:
        """The address sign-in limits count per: the one the API's throttles trust
        (`API_NUM_PROXIES` hops from the right of X-Forwarded-For, else REMOTE_ADDR). allauth's
        own reading is REMOTE_ADDR, which behind a load balancer is the balancer's: every
        reader would share one limit."""
        # get_ident reads only request.META, which a Django request has as DRF's does.
        return BaseThrottle().get_ident(request)  # type: ignore[arg-type]

    def pre_login(self, request: HttpRequest, user, **kwargs):
        # Before allauth's e-mail verification stage, which would otherwise send the person
        # holding the server hunting for a confirmation link on their first sign-in.
        if user.is_superuser:
            superuser_address_confirm(user=user)
        return super().pre_login(request, user, **kwargs)

    def get_signup_redirect_url(self, request: HttpRequest) -> str:
        return reverse("chat:page")

    def get_login_redirect_url(self, request: HttpRequest) -> str:
        if request.user.is_authenticated and onboarding_pending(user=request.user):
            return reverse("chat:page")
        return super().get_login_redirect_url(request)


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def save_user(self, request: HttpRequest, sociallogin, form=None):
        user = super().save_user(request, sociallogin, form=form)
        profile_create_for_signup(user=user)
        return user
