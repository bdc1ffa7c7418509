"""What a new web worker loads before it accepts its first request.

gunicorn calls `warm_up` from its `post_worker_init` hook (deploy/gunicorn.conf.py): a worker
accepts connections only once it returns, so no reader waits while a worker reads the
encoder's model, maps the search indexes and compiles the templates. Each step that fails
(the database away at boot, an index not built yet) is logged in one line and left to the
first request, which then does it as before: a warm-up never keeps a worker from starting. A
database that does not answer ends the warm-up at the first step that needs it (within the
connect timeout, DB_CONNECT_TIMEOUT), rather than at each step in turn.
A database connection it opens is the first request's to keep or close (CONN_MAX_AGE), as
Django does with every request's.
The encoder's model is loaded only when it exists: exporting it takes minutes, longer than
gunicorn lets a worker boot, so that is `manage.py prepare_encoder`'s job at deploy time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.template import engines
from django.test import Client
from django.urls import get_resolver

from papers.spelling import english_words
from wovepaper.lib.embeddings import text_encoder
from wovepaper.lib.mapped import populate, wait_populated
from wovepaper.site_search import SiteSearch, site_search

log = logging.getLogger(__name__)

# Words that most papers' fields share, so that every engine's path runs end to end.
QUERY = "neural network models"


def compile_templates() -> int:
    """Every template of the project's own (not its libraries'), compiled into the cached
    loader; the number compiled."""
    base = Path(settings.BASE_DIR)
    # The project's apps are the top-level packages beside manage.py (a virtualenv under the
    # project holds the libraries' apps: their templates load on first use).
    roots = [base / "templates"] + [
        Path(config.path) / "templates"
        for config in apps.get_app_configs()
        if Path(config.path).parent == base
    ]
    # Papers' list items are Jinja2's (papers/jinja.py); the rest Django's.
    engine_of = {suffix: engines["django"] for suffix in (".html", ".txt", ".md", ".xml")}
    engine_of[".jinja"] = engines["jinja2"]
    compiled = 0
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix in engine_of:
                engine_of[path.suffix].get_template(path.relative_to(root).as_posix())
                compiled += 1
    return compiled


def load_urls() -> int:
    return len(get_resolver().reverse_dict)


def load_search() -> str:
    """One search of every kind the search page runs; by meaning too when the encoder's
    model is there to load."""
    encoder = text_encoder()
    by_meaning = encoder.is_prepared()
    if by_meaning:
        encoder.prepare()
    else:
        log.warning(
            "warm-up: the encoder's model is not exported yet (python manage.py prepare_encoder);"
            " the first search by meaning in this worker will wait for it"
        )
    site_search(
        SiteSearch(query=QUERY, mode="hybrid" if by_meaning else "keyword"),
        offset=0,
        limit=1,
        side_limit=1,
    )
    # The English words a search that finds nothing is checked against (papers.spelling).
    english_words()
    # The tantivy indexes' files, mapped by that search, mapped in whole, and the vector
    # index's, which it maps in a thread when it opens it: a worker's first searches then wait
    # on no page fault.
    if settings.SEARCH_ENGINE == "tantivy":
        populate(Path(settings.SEARCH_INDEX_DIR))
    wait_populated()
    return "hybrid" if by_meaning else "keyword"


def render_home_page() -> int:
    """The home page through the whole stack (middleware, context processors, the static
    files' manifest, the cache's connection), as a reader's request to this host would."""
    host = next((h.lstrip(".") for h in settings.ALLOWED_HOSTS if h != "*"), "localhost")
    return Client(HTTP_HOST=host).get("/", secure=True).status_code


STEPS: dict[str, Callable[[], object]] = {
    "templates": compile_templates,
    "urls": load_urls,
    "search": load_search,
    "home page": render_home_page,
}


def warm_up() -> dict[str, float]:
    """Each step's seconds (a failed step is logged and skipped)."""
    if not settings.WEB_WARM_UP:
        return {}
    seconds: dict[str, float] = {}
    for name, step in STEPS.items():
        started = time.perf_counter()
        try:
            step()
        except (OperationalError, InterfaceError) as error:
            # A database that does not answer will not answer the next step either: each
            # would wait its connect timeout again while the worker accepts nothing.
            log.warning(
                "warm-up: %s and the rest skipped, the database does not answer: %s: %s",
                name,
                type(error).__name__,
                error,
            )
            break
        except Exception as error:  # a warm-up never stops a worker from starting
            log.warning("warm-up: %s skipped: %s: %s", name, type(error).__name__, error)
            continue
        seconds[name] = time.perf_counter() - started
    log.info(
        "warm-up done: %s",
        ", ".join(f"{name} {elapsed:.2f} s" for name, elapsed in seconds.items()),
    )
    return seconds
