"""Request types for views: what middleware and decorators add to Django's HttpRequest, for the
type checker (django-stubs' HttpRequest knows neither django-htmx's `htmx` nor that a
`login_required` view's user is signed in)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """A request that went through django-htmx's middleware (every request here does)."""

    htmx: HtmxDetails


class AuthenticatedHttpRequest(HtmxHttpRequest):
    """The request of a view only a signed-in user reaches (`login_required` or a check of its
    own before it reads `user`)."""

    user: User
