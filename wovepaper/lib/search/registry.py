"""Which backend answers for a collection: settings.SEARCH_ENGINE, one instance per process.

An engine backend holds what is costly to open (a tantivy index and its reader, an OpenSearch
connection pool), so each process keeps one per collection and configuration.
"""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings

from .base import Collection, SearchBackend
from .tantivy import TantivyBackend

ENGINES = ("database", "tantivy", "opensearch")

_backends: dict[tuple[Any, ...], SearchBackend] = {}
_lock = threading.Lock()


def _configuration() -> tuple[Any, ...]:
    engine = getattr(settings, "SEARCH_ENGINE", "database")
    if engine == "tantivy":
        return engine, str(settings.SEARCH_INDEX_DIR)
    if engine == "opensearch":
        return engine, settings.OPENSEARCH_URL, settings.OPENSEARCH_INDEX_PREFIX
    if engine == "database":
        return (engine,)
    raise ValueError(f"SEARCH_ENGINE must be one of {', '.join(ENGINES)}, not {engine!r}")


def backend_for(collection: Collection) -> SearchBackend:
    """The configured engine's backend for `collection` (the database's when none is)."""
    configuration = _configuration()
    key = (collection.name, *configuration)
    backend = _backends.get(key)
    if backend is None:
        with _lock:
            backend = _backends.get(key)
            if backend is None:
                backend = _backends[key] = _make(collection, configuration)
    return backend


def _make(collection: Collection, configuration: tuple[Any, ...]) -> SearchBackend:
    engine = configuration[0]
    if engine == "tantivy":
        return TantivyBackend(collection, directory=configuration[1])
    if engine == "opensearch":
        # opensearch-py is an optional extra (`pip install .[opensearch]`): only processes
        # configured for a cluster import it.
        from .opensearch import OpenSearchBackend

        return OpenSearchBackend(collection, url=configuration[1], prefix=configuration[2])
    return collection.database(collection)


def reset_backends() -> None:
    """Forget the backends made so far (tests that switch engines, a rebuilt index)."""
    with _lock:
        for backend in _backends.values():
            close = getattr(backend, "close", None)
            if close:
                close()
        _backends.clear()
