"""PostgreSQL read replicas for the public pages.

Anonymous GET and HEAD requests to public pages are the same for every reader and tolerate a
replica's lag of a moment, so their reads go to a replica (`DATABASE_REPLICA_URLS`, one alias
each, chosen at random per request). Everything else reads the primary: signed-in pages (a
reader must see their own follow at once), every write and the reads around it, the admin,
Celery tasks and commands (no request at all). Writes always go to the primary.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from contextvars import ContextVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS
from django.http import HttpRequest, HttpResponse

_replica: ContextVar[str | None] = ContextVar("wovepaper_replica", default=None)

# Paths whose reads must see the primary even for anonymous visitors: signing in and up (the
# session and account rows were just written), the admin.
PRIMARY_PREFIXES = ("/accounts/", "/admin/", "/onboarding/")


def reading_replica() -> bool:
    """Whether this request reads from a replica (an anonymous page view): such a request is
    expected to write nothing."""
    return _replica.get() is not None


class ReplicaRouter:
    """Reads go to the replica the current request was given, if any; writes to the primary.
    Replicas are physical copies of the primary, so nothing is migrated on them."""

    def db_for_read(self, model, **hints) -> str | None:
        return _replica.get()

    def db_for_write(self, model, **hints) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints) -> bool:
        return True

    def allow_migrate(self, db: str, app_label: str, **hints) -> bool:
        return db == DEFAULT_DB_ALIAS


class ReplicaReadsMiddleware:
    """Gives anonymous GET/HEAD requests for public pages a replica for their reads."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        replicas = settings.DATABASE_REPLICAS
        user = getattr(request, "user", None)
        if (
            not replicas
            or request.method not in ("GET", "HEAD")
            or request.path.startswith(PRIMARY_PREFIXES)
            or (user is not None and user.is_authenticated)
        ):
            return self.get_response(request)
        token = _replica.set(random.choice(replicas))
        try:
            return self.get_response(request)
        finally:
            _replica.reset(token)
