"""A signed-in reader's state, for the pages every signed-in reader shares, kept by their browser.

The public pages are rendered once for every signed-in reader (wovepaper.lib.pagecache). What is
the reader's own on them (the nav's account links, follow and "this is me" buttons, each paper's
save control, the onboarding banner) is filled in by `static/js/reader.js` from one answer of
`/me/state`, which does not depend on the page: the reader's follows, saved papers and claims,
whether their setup is unfinished, and a CSRF token. Every control is markup the server renders
from its one template: a follow button's and "this is me"'s signed-in forms are in the shared
page, hidden, for reader.js to show the reader's; the reader's claims, and their save control
for each set of lists a paper of theirs is in, come in the state as HTML (a save control made
for a stand-in paper, which reader.js names as the page's paper). The account links and the
setup offer, the same for every signed-in reader, are in the shared page itself. So the
browser keeps it (`private, max-age=READER_STATE_SECONDS`) and a reader going from page to page
asks the server for the shared page alone, which costs what an anonymous reader's cached page
does.

The browser asks for `/me/state?v=<the wp_state cookie>`. Every response to a request that can
change something (POST, PUT, PATCH, DELETE: a follow, a save, a sign-in or sign-out)
sets that cookie to a new random value (`ReaderStateCookieMiddleware`), so the next page asks
for the state afresh and never reads one kept from before the change, or another reader's
in the same browser. A change made elsewhere (another device, a curator's decision on a claim)
is seen once the kept answer is READER_STATE_SECONDS old.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.template import Engine, RequestContext
from django.urls import reverse
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.views.decorators.http import require_GET

from papers.models import Paper
from wovepaper.lib.request_types import AuthenticatedHttpRequest

from .follows import followed_institution_ids, followed_researcher_ids
from .library.lists import SaveControl, reading_lists_for_user
from .library.models import ReadingList, SavedPaper
from .onboarding import onboarding_pending
from .ownership.claims import claims_for_user

COOKIE = "wp_state"
# What a save control in the state says in place of its paper's id and title, which reader.js
# replaces with the page's paper's, as text: between private-use characters, which no list name
# or title means to hold.
STAND_IN_PAPER = "\ue000paper\ue001"
STAND_IN_TITLE = "\ue000title\ue001"
_CHANGING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@require_GET
def me_state(request: HttpRequest) -> HttpResponse:
    """The signed-in reader's state for the pages every signed-in reader shares
    (accounts.reader_state), which their browser keeps; nothing for anyone else."""
    if not request.user.is_authenticated:
        return state_response(None)
    signed_in = cast(AuthenticatedHttpRequest, request)
    return state_response(reader_state(request, signed_in.user))


def reader_state(request: HttpRequest, user: User) -> dict[str, Any]:
    """Everything reader.js needs on any shared page. Queries: the follows of researchers (one,
    plus one per merge level present) and of institutions (one), the lists (one), the saved
    papers (one), the claims (one) and the unfinished setup (one), whatever the page or the size
    of the reader's library; the answer grows with it (about 15 bytes per saved paper, and a
    save control of about 1 kB per distinct set of lists a saved paper is in: one per list for
    a reader who keeps each paper in one list)."""
    lists = reading_lists_for_user(user=user)
    saved: dict[str, list[int]] = {}
    rows = (
        SavedPaper.objects.filter(reading_list__user=user)
        .order_by("paper_id", "reading_list_id")
        .values_list("paper_id", "reading_list_id")
    )
    for paper_id, list_id in rows:
        saved.setdefault(str(paper_id), []).append(list_id)
    claims = list(claims_for_user(user=user).select_related("researcher"))
    pieces: list[tuple[str, dict]] = [
        (
            "accounts/_claim_button.html",
            {"researcher": claim.researcher, "signed_in": True, "claim": claim, "next_url": "/"},
        )
        for claim in claims
    ]
    # One save control for each set of lists a saved paper is in, and for none.
    kinds = sorted({",".join(map(str, ids)) for ids in saved.values()} | {""})
    save_pieces = [
        ("accounts/library/_save_button.html", _save_control(lists, kind)) for kind in kinds
    ]
    rendered = render_each_in_one_context(request, pieces + save_pieces)
    return {
        "csrf": get_token(request),
        # The reader's claims as HTML, each replacing the page's button of the same id; their
        # `next` fields are set to the page's own address by reader.js.
        "parts": rendered[: len(pieces)],
        "onboarding": onboarding_pending(user=user),
        "following": {
            "researcher": followed_researcher_ids(user=user),
            "institution": followed_institution_ids(user=user),
        },
        "saved": saved,
        # By the ids of the lists the paper is in, as `saved` gives them ("" for none).
        "save_controls": dict(zip(kinds, rendered[len(pieces) :], strict=True)),
        "claimed": [claim.researcher_id for claim in claims],
    }


def _save_control(lists: list[ReadingList], kind: str) -> dict:
    """The save control of a stand-in paper in the lists `kind` names, as the reader sees it."""
    saved_in = {int(pk) for pk in kind.split(",") if pk}
    paper = Paper(title=STAND_IN_TITLE)
    # Not a row: the id is the stand-in reader.js replaces, never saved or looked up.
    paper.pk = STAND_IN_PAPER
    control = SaveControl(
        paper=paper,
        signed_in=True,
        lists=lists,
        saved_in=[r for r in lists if r.pk in saved_in],
        next_url="/",
        save_url=reverse("accounts:save"),
        unsave_url=reverse("accounts:unsave"),
    )
    return {"control": control}


def render_each_in_one_context(request: HttpRequest, pieces: list[tuple[str, dict]]) -> list[str]:
    """Each (template, context) rendered in turn inside one request context: a separate
    `render_to_string` per piece would run every context processor once per piece."""
    engine = Engine.get_default()
    templates = [(engine.get_template(name), extra) for name, extra in pieces]
    if not templates:
        return []
    context = RequestContext(request)
    rendered: list[str] = []
    # Binding the context to a template runs the processors; nested renders reuse that binding.
    with context.render_context.push_state(templates[0][0]), context.bind_template(templates[0][0]):
        for template, extra in templates:
            with context.push(extra):
                rendered.append(template.render(context))
    return rendered


def state_response(state: dict[str, Any] | None) -> HttpResponse:
    """The state as the browser may keep it (nothing for a reader not signed in)."""
    if state is None:
        response: HttpResponse = HttpResponse(status=204)
        patch_cache_control(response, private=True, no_store=True)
    else:
        response = JsonResponse(state)
        patch_cache_control(response, private=True, max_age=settings.READER_STATE_SECONDS)
    patch_vary_headers(response, ["Cookie"])
    return response


class ReaderStateCookieMiddleware:
    """After any request that can change what a reader's state holds, a new `wp_state`: the
    browser's kept `/me/state` answer is then no longer the one its pages ask for."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.method in _CHANGING_METHODS:
            response.set_cookie(
                COOKIE,
                secrets.token_urlsafe(12),
                samesite="Lax",
                secure=settings.SESSION_COOKIE_SECURE,
                # Read by reader.js, which puts it in the state's URL; it says nothing itself.
                httponly=False,
            )
        return response
