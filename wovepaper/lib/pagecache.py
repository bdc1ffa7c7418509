"""Anonymous public pages rendered once and served many times from the cache.

Every anonymous reader of a paper, researcher or institution page sees the same page, so the
first request renders it and the next ones are served from Django's cache (Redis in production,
shared by every web process behind a load balancer). A cached page is served only while the
records it was rendered from are unchanged:

- a view names the records its page shows with `page_shows(request, kind, pk)`; the entry keeps
  each record's current *version token* (a random string in the cache);
- the services that change a record call `pages_changed(kind, pks)`, which drops the tokens;
  a hit whose tokens are no longer current is rendered again;
- every page also depends on the site token (`pages_changed(SITE)`: curation merges and splits,
  admin edits) and list pages on the lists token (new papers);
- what a page shows of *other* records (a co-author's name, a paper title in a list) is at most
  `PAGE_CACHE_SECONDS` old: the entry's time to live bounds it.

Each web process also keeps the entries it served last in its own memory (the `pages_near`
cache alias, when configured): a hit then costs one round trip to the shared cache, for the
tokens, instead of two and the page's bytes. The tokens are checked on every hit either way,
so a change is seen by every process at once.

Signed-in readers share a page too. Their page is rendered once, as an anonymous reader's (the
view sees no user, so no CSRF token, follow state or account link enters it), with one addition:
static/js/reader.js, which makes the account links, follow, claim and save controls the
reader's from their state (`/me/state`, accounts.reader_state): one answer for every page,
which their browser keeps. That shared signed-in body is kept under its own key and is the same
for every signed-in reader.

A view names the query parameters it reads (`cache_public_page(query=...)`); a request with
any other parameter (`?utm_source=`, `?junk=1`) is rendered afresh and not stored, so made-up
parameters cannot fill the cache with copies of one page.

Never cached: requests with one-time messages waiting (a messages cookie, or messages kept in
the session), staff (their pages carry curation tools), anything but GET and HEAD, and any
response that sets a cookie, asked for a CSRF token or wrote to the session; those pages are
rendered for their reader as before (`private` when signed in). The cache is consulted inside
the view, after every middleware: security headers, the CSP and Vary are added to a cached page
as to a fresh one. Cached pages carry an ETag and Last-Modified and answer 304. Anonymous pages
are `Cache-Control: public, max-age`, so a proxy or CDN in front can keep them too (it must pass
requests with a session cookie through, as `Vary: Cookie` says); signed-in readers' shared
bodies are `private`: no shared proxy keeps a response sent to a signed-in reader.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.models import AnonymousUser
from django.core.cache import InvalidCacheBackendError, cache, caches
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.http import http_date

from .negotiation import wants_htmx_fragment, wants_markdown

log = logging.getLogger(__name__)

SITE = "site"
LISTS = "lists"
_DEPENDENCIES = "_page_dependencies"
_SHARED_SIGNED_IN = "_page_shared_signed_in"
# Django's session storage of messages (django.contrib.messages.storage.session.SessionStorage).
_SESSION_MESSAGES = "_messages"
# Set at sign-in: "reader" or "staff" (see _signed_in_reader_not_staff).
_SESSION_READER = "_page_reader"
ANONYMOUS = "anonymous"
SIGNED_IN = "signed-in"


def rendering_shared_signed_in_page(request: HttpRequest) -> bool:
    """True while the view renders the body every signed-in reader shares: the per-user parts
    render as an anonymous reader's, with what the reader's browser needs to make them theirs
    (accounts.reader_state)."""
    return bool(getattr(request, _SHARED_SIGNED_IN, False))


def page_shows(request: HttpRequest, kind: str, pk: int | str) -> None:
    """Record that the page being rendered shows record `kind` `pk`: a change to it, announced
    with `pages_changed(kind, [pk])`, makes the cached page stale. Call it as soon as the record
    is read, so that its token is taken before anything on the page can have changed."""
    tokens = getattr(request, _DEPENDENCIES, None)
    if tokens is None:
        return
    try:
        tokens.update(_current_tokens([f"{kind}:{pk}"]))
    except Exception:  # noqa: BLE001 (a token not held makes the entry stale at once)
        tokens[f"{kind}:{pk}"] = ""


def pages_changed(kind: str, pks: Iterable[int | str] = (0,)) -> None:
    """Cached pages that show these records are stale from now on. The tokens are dropped at
    once and, inside a transaction, again when it commits: a page rendered from the old rows
    while the transaction was open must not stay under a token minted in between. A cache that
    cannot be reached is logged, not raised: the change itself has happened, and entries live
    at most PAGE_CACHE_SECONDS."""
    keys = [_token_key(f"{kind}:{pk}") for pk in pks]
    if not keys:
        return
    _drop_tokens(kind, keys)
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(lambda: _drop_tokens(kind, keys))


def _drop_tokens(kind: str, keys: list[str]) -> None:
    try:
        cache.delete_many(keys)
    except Exception:  # noqa: BLE001 (any cache backend's connection error)
        log.warning("page cache: could not mark %d %s page(s) stale", len(keys), kind)


def cache_public_page(*, lists: bool = False, query: Iterable[str] = ()) -> Callable:
    """Serve the view's anonymous GET responses from the page cache (see the module docstring).
    `lists`: the page lists the newest papers, so new papers make it stale. `query`: the query
    parameters the view reads; a request carrying any other is served uncached."""
    shared = [f"{SITE}:0", *([f"{LISTS}:0"] if lists else [])]
    known_parameters = frozenset(query)

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            audience = _audience(request)
            if audience is not None and not known_parameters.issuperset(request.GET):
                audience = None
            if audience is None:
                response = view(request, *args, **kwargs)
                if request.user.is_authenticated:
                    patch_cache_control(response, private=True)
                return response
            key = _page_key(request, audience)
            try:
                hit = _fresh_entry(key)
                if hit is None:
                    setattr(request, _DEPENDENCIES, _current_tokens(shared))
            except Exception:  # noqa: BLE001 (an unreachable cache renders the page afresh)
                log.warning("page cache: unreachable, rendering the page")
                response = view(request, *args, **kwargs)
                if audience == SIGNED_IN:
                    patch_cache_control(response, private=True)
                return response
            if hit is not None:
                response, etag, modified = hit
            else:
                response = _render_shared(view, request, audience, args, kwargs)
                if not _cacheable_response(request, response):
                    return response
                etag, modified = _store(key, response, getattr(request, _DEPENDENCIES))
            response["ETag"] = etag
            response["Last-Modified"] = http_date(modified)
            if audience == SIGNED_IN:
                patch_cache_control(response, private=True, max_age=settings.PAGE_CACHE_MAX_AGE)
            else:
                patch_cache_control(response, public=True, max_age=settings.PAGE_CACHE_MAX_AGE)
            patch_vary_headers(response, ["Cookie"])
            conditional = get_conditional_response(
                request, etag=etag, last_modified=int(modified), response=response
            )
            return response if conditional is None else conditional

        return wrapped

    return decorate


def _audience(request: HttpRequest) -> str | None:
    """Which shared page this request may be served: ANONYMOUS, SIGNED_IN, or None (rendered
    for this reader alone)."""
    if settings.PAGE_CACHE_SECONDS <= 0 or request.method not in ("GET", "HEAD"):
        return None
    cookies = request.COOKIES
    if cookies.get("messages"):
        return None  # a one-time message must show on this very page (an emptied one is gone)
    if settings.SESSION_COOKIE_NAME in cookies:
        try:
            if _SESSION_MESSAGES in request.session:
                return None
        except Exception:  # noqa: BLE001 (an unreadable session: render for this reader)
            return None
        if _signed_in_reader_not_staff(request.session):
            return SIGNED_IN
    user = request.user
    if not user.is_authenticated:
        return ANONYMOUS
    if user.is_staff:
        return None  # curators' pages carry their curation tools
    return SIGNED_IN


def _signed_in_reader_not_staff(session) -> bool:
    """Whether the session says, without loading its user, that a reader who is not staff is
    signed in (`note_reader_signed_in` wrote it at sign-in). The shared body holds nothing of
    the reader's, so a session whose user has since been deactivated or changed password gets
    only what any signed-in reader gets: its fragment, which loads and checks the user, then
    answers nothing. A reader made staff later sees the curation tools on cached pages after
    signing in again; staff made readers are loaded and checked on every request."""
    return session.get(_SESSION_READER) == "reader" and session.get(SESSION_KEY) is not None


def note_reader_signed_in(sender: Any, request: HttpRequest, user: Any, **kwargs: Any) -> None:
    """At sign-in (django's `user_logged_in`), note in the session whether the reader is staff,
    so that serving them a shared cached page needs no query for their user."""
    if getattr(request, "session", None) is not None:
        request.session[_SESSION_READER] = "staff" if user.is_staff else "reader"


def _render_shared(
    view: Callable[..., HttpResponse], request: HttpRequest, audience: str, args, kwargs
) -> HttpResponse:
    """The view's page as every reader of `audience` sees it. For signed-in readers the view
    sees no user: what it renders is an anonymous reader's page (with the fragment's loader),
    and a stray `{% csrf_token %}` would make the response uncacheable, as for anyone."""
    if audience != SIGNED_IN:
        return view(request, *args, **kwargs)
    user = request.user
    request.user = AnonymousUser()
    setattr(request, _SHARED_SIGNED_IN, True)
    try:
        return view(request, *args, **kwargs)
    finally:
        request.user = user
        setattr(request, _SHARED_SIGNED_IN, False)


def _cacheable_response(request: HttpRequest, response: HttpResponse) -> bool:
    """A 200 that is the same for every anonymous reader: it sets no cookie, asked for no CSRF
    token (the token in the page would not match the next reader's cookie) and wrote nothing to
    a session."""
    session = getattr(request, "session", None)
    return (
        response.status_code == 200
        and not request.META.get("CSRF_COOKIE_NEEDS_UPDATE")
        and not (session is not None and session.modified)
        and not response.streaming
        and not response.cookies
        and "private" not in response.get("Cache-Control", "")
    )


def _page_key(request: HttpRequest, audience: str = ANONYMOUS) -> str:
    variant = "md" if wants_markdown(request) else "html"
    if audience == SIGNED_IN:
        variant += "-signed-in"
    if wants_htmx_fragment(request):
        variant += "-htmx"
    address = hashlib.sha256(f"{request.get_host()}{request.get_full_path()}".encode()).hexdigest()
    return f"page:{variant}:{address}"


def _token_key(dependency: str) -> str:
    return f"pagever:{dependency}"


def _near_cache():
    """This process's own copy of recent entries, or None where none is configured (the
    embedded default's cache is process-local already)."""
    try:
        return caches["pages_near"]
    except InvalidCacheBackendError:
        return None


def _fresh_entry(key: str) -> tuple[HttpResponse, str, float] | None:
    """The cached page at `key` if every record it showed still has the token it had."""
    near = _near_cache()
    entry = near.get(key) if near is not None else None
    if entry is not None and time.time() - entry["modified"] >= settings.PAGE_CACHE_SECONDS:
        entry = None  # no older than the shared entry could be
    if entry is None:
        entry = cache.get(key)
        if entry is None:
            return None
        if near is not None:
            near.set(key, entry, settings.PAGE_CACHE_SECONDS)
    tokens = entry["tokens"]
    current = cache.get_many([_token_key(d) for d in tokens])
    if any(current.get(_token_key(d)) != token for d, token in tokens.items()):
        if near is not None:
            near.delete(key)
        return None
    return entry["response"], entry["etag"], entry["modified"]


def _store(key: str, response: HttpResponse, tokens: dict[str, str]) -> tuple[str, float]:
    etag = '"' + hashlib.sha256(response.content).hexdigest()[:32] + '"'
    modified = time.time()
    entry = {"response": response, "etag": etag, "modified": modified, "tokens": tokens}
    try:
        cache.set(key, entry, settings.PAGE_CACHE_SECONDS)
    except Exception:  # noqa: BLE001 (the page is served; it is only not kept)
        log.warning("page cache: unreachable, page not kept")
        return etag, modified
    near = _near_cache()
    if near is not None:
        near.set(key, entry, settings.PAGE_CACHE_SECONDS)
    return etag, modified


def _current_tokens(dependencies: list[str]) -> dict[str, str]:
    """Each dependency's token, minting one where none is held. `add` keeps a token another
    process minted first, so the value read back is the one every process sees."""
    keys = {d: _token_key(d) for d in dependencies}
    held = cache.get_many(list(keys.values()))
    missing = [k for k in keys.values() if k not in held]
    if missing:
        for token_key in missing:
            cache.add(token_key, secrets.token_hex(8), None)
        held = cache.get_many(list(keys.values()))
    return {d: held.get(k, "") for d, k in keys.items()}
