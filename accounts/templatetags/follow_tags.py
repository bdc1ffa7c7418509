"""`{% load follow_tags %}{% follow_button researcher %}` (or an institution): the follow button
with its count."""

from __future__ import annotations

from django import template
from django.http import HttpRequest
from django.urls import reverse

from institutions.models import Institution
from researchers.models import Researcher

from .. import selectors

register = template.Library()


def _button(
    request: HttpRequest | None,
    record: Researcher | Institution,
    *,
    count: int,
    following: bool,
    signed_in: bool,
    next_url: str | None,
) -> dict:
    """What the one follow button template shows, for a researcher or an institution."""
    if next_url is None:
        next_url = request.get_full_path() if request is not None else record.get_absolute_url()
    if isinstance(record, Institution):
        kind, name = "institution", record.name
        hint = "papers with an author there show in your feed"
        urls = ("accounts:follow_institution", "accounts:unfollow_institution")
    else:
        kind, name = "researcher", record.display_name
        hint = "their new papers show in your feed"
        urls = ("accounts:follow", "accounts:unfollow")
    return {
        kind: record,
        "dom_id": f"follow-{record.pk}" if kind == "researcher" else f"follow-{kind}-{record.pk}",
        "name": name,
        "hint": hint,
        "action_url": reverse(urls[1] if following else urls[0], args=[record.pk]),
        "follower_count": count,
        "following": following,
        "signed_in": signed_in,
        "next_url": next_url,
    }


def follow_button_context(
    request: HttpRequest | None, record: Researcher | Institution, *, next_url: str | None = None
) -> dict:
    """What the button shows. For a researcher, reads `follower_count` and `is_followed` when a
    list set them (accounts.selectors.researchers_with_follow_state); otherwise two small
    indexed queries."""
    user = getattr(request, "user", None)
    signed_in = bool(user is not None and user.is_authenticated)
    if isinstance(record, Institution):
        count, following = selectors.institution_follow_state(user=user, institution=record)
    else:
        count = getattr(record, "follower_count", None)
        if count is None:
            count = selectors.follower_count(researcher=record)
        following = getattr(record, "is_followed", None)
        if following is None:
            following = signed_in and selectors.is_following(user=user, researcher=record)
    return _button(
        request, record, count=count, following=following, signed_in=signed_in, next_url=next_url
    )


@register.inclusion_tag("accounts/_follow_button.html", takes_context=True)
def follow_button(context, record: Researcher | Institution) -> dict:
    """`{% follow_button researcher %}` or `{% follow_button institution %}`."""
    ctx = follow_button_context(context.get("request"), record)
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
