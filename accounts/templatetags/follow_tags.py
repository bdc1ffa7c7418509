"""`{% load follow_tags %}{% follow_button researcher %}`: the follow button with its count."""

from __future__ import annotations

from django import template
from django.http import HttpRequest

from institutions.models import Institution
from researchers.models import Researcher

from .. import selectors

register = template.Library()


def follow_button_context(
    request: HttpRequest | None, researcher: Researcher, *, next_url: str | None = None
) -> dict:
    """What the button shows. Reads `follower_count` and `is_followed` when a list set them
    (accounts.selectors.researchers_with_follow_state); otherwise two small indexed queries."""
    user = getattr(request, "user", None)
    signed_in = bool(user is not None and user.is_authenticated)
    count = getattr(researcher, "follower_count", None)
    if count is None:
        count = selectors.follower_count(researcher=researcher)
    following = getattr(researcher, "is_followed", None)
    if following is None:
        following = signed_in and selectors.is_following(user=user, researcher=researcher)
    if next_url is None:
        next_url = request.get_full_path() if request is not None else researcher.get_absolute_url()
    return {
        "researcher": researcher,
        "follower_count": count,
        "following": following,
        "signed_in": signed_in,
        "next_url": next_url,
    }


@register.inclusion_tag("accounts/_follow_button.html", takes_context=True)
def follow_button(context, researcher: Researcher) -> dict:
    ctx = follow_button_context(context.get("request"), researcher)
    ctx["csrf_token"] = context.get("csrf_token")
    return ctx


def institution_follow_button_context(
    request: HttpRequest | None, institution: Institution, *, next_url: str | None = None
) -> dict:
    user = getattr(request, "user", None)
    signed_in = bool(user is not None and user.is_authenticated)
    count, following = selectors.institution_follow_state(user=user, institution=institution)
    if next_url is None:
        next_url = (
            request.get_full_path() if request is not None else institution.get_absolute_url()
        )
    return {
        "institution": institution,
        "follower_count": count,
        "following": following,
        "signed_in": signed_in,
        "next_url": next_url,
    }


@register.inclusion_tag("accounts/_institution_follow_button.html", takes_context=True)
def institution_follow_button(context, institution: Institution) -> dict:
    """`{% institution_follow_button institution %}`: follow an institution's new papers."""
    ctx = institution_follow_button_context(context.get("request"), institution)
    ctx["csrf_token"] = context.get("csrf_token")
    return ctx


@register.inclusion_tag("accounts/_claim_button.html", takes_context=True)
def claim_button(context, researcher: Researcher) -> dict:
    """ "This is me" on a researcher page; a sign-in prompt for signed-out visitors."""
    request = context.get("request")
    user = getattr(request, "user", None)
    signed_in = bool(user is not None and user.is_authenticated)
    claim = None
    if signed_in:
        claim = user.claims.filter(researcher_id=researcher.pk).first()
    return {
        "researcher": researcher,
        "signed_in": signed_in,
        "claim": claim,
        "next_url": request.get_full_path() if request else researcher.get_absolute_url(),
        "csrf_token": context.get("csrf_token"),
    }
