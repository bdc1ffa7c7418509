"""What the buttons on a researcher's or an institution's page (follow, "this is me") share before
they act: the record, where to go back to, and sending a signed-out visitor to sign in."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar
from urllib.parse import urlencode

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect

from institutions.models import Institution
from researchers.models import Researcher
from wovepaper.lib.next_url import next_url_or
from wovepaper.lib.request_types import AuthenticatedHttpRequest

_Record = TypeVar("_Record", Researcher, Institution)


def action_on(model: type[_Record]):
    """Load the record (researcher, institution) a button acts on and where to go afterwards; a
    signed-out visitor is sent to sign in first and comes back to the same place (an htmx button
    cannot follow a redirect itself, so it is told to)."""

    def decorate(view: Callable[[HttpRequest, Any, str], HttpResponse]):
        @wraps(view)
        def wrapper(request: AuthenticatedHttpRequest, **kwargs: int) -> HttpResponse:
            (pk,) = kwargs.values()
            record = get_object_or_404(model, pk=pk)
            next_url = next_url_or(request, record.get_absolute_url())
            if request.user.is_authenticated:
                return view(request, record, next_url)
            if request.htmx:
                login_url = f"{reverse('account_login')}?{urlencode({'next': next_url})}"
                return HttpResponseClientRedirect(login_url)
            return redirect_to_login(next_url)

        return wrapper

    return decorate


researcher_action = action_on(Researcher)
institution_action = action_on(Institution)
