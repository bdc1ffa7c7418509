"""Which backend answers for a collection: settings.SEARCH_ENGINE, one instance per process.

An engine backend holds what is costly to open (a tantivy index and its reader, an OpenSearch
connection pool), so each process keeps one per collection and configuration.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from django.conf import settings

from .base import Collection, SearchBackend
from .hybrid import HybridBackend
from .pgvector import PgvectorBackend, pgvector_available
from .tantivy import TantivyBackend
from .vectors import ExactVectorBackend, UsearchBackend, VectorBackend

ENGINES = ("database", "tantivy", "opensearch")
VECTOR_ENGINES = ("auto", "usearch", "pgvector", "exact")
MODES = ("keyword", "semantic", "hybrid")

_backends: dict[tuple[Any, ...], SearchBackend] = {}
# VECTOR_ENGINE=auto's answer per database alias, found once per process.
_detected: dict[str, str] = {}
# Reentrant: a hybrid backend is made of the other two, made under the same lock.
_lock = threading.RLock()


def _configuration() -> tuple[Any, ...]:
    engine = getattr(settings, "SEARCH_ENGINE", "database")
    if engine == "tantivy":
        return engine, str(settings.SEARCH_INDEX_DIR)
    if engine == "opensearch":
        return engine, settings.OPENSEARCH_URL, settings.OPENSEARCH_INDEX_PREFIX
    if engine == "database":
        return (engine,)
    raise ValueError(f"SEARCH_ENGINE must be one of {', '.join(ENGINES)}, not {engine!r}")


def vector_engine() -> str:
    """settings.VECTOR_ENGINE, with "auto" resolved: pgvector when VECTOR_DATABASE is
    PostgreSQL with the extension available, else usearch."""
    engine = getattr(settings, "VECTOR_ENGINE", "auto")
    if engine not in VECTOR_ENGINES:
        raise ValueError(
            f"VECTOR_ENGINE must be one of {', '.join(VECTOR_ENGINES)}, not {engine!r}"
        )
    if engine != "auto":
        return engine
    alias = settings.VECTOR_DATABASE
    if alias not in _detected:
        _detected[alias] = "pgvector" if pgvector_available(alias) else "usearch"
    return _detected[alias]


def _vector_configuration() -> tuple[Any, ...]:
    return (
        vector_engine(),
        str(settings.VECTOR_INDEX_DIR),
        settings.EMBEDDING_ENCODER,
        settings.VECTOR_DELTA_MAX,
        settings.VECTOR_DATABASE,
    )


def backend_for(collection: Collection, mode: str = "keyword") -> SearchBackend:
    """The configured backend for `collection`: by keyword (the engine's, the database's when
    none is set), by meaning (the vector engine's; the collection must declare its vectors),
    or both fused (hybrid)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    configuration: tuple[Any, ...] = ()
    if mode != "semantic":
        configuration += _configuration()
    if mode != "keyword":
        if collection.vectors is None:
            raise ValueError(f"{collection.name} cannot be searched by meaning")
        configuration += _vector_configuration()
    key = (collection.name, mode, *configuration)
    backend = _backends.get(key)
    if backend is None:
        with _lock:
            backend = _backends.get(key)
            if backend is None:
                backend = _backends[key] = _make_mode(collection, mode)
    return backend


def vector_backend_for(collection: Collection) -> VectorBackend:
    """The configured backend by meaning, typed as one: what only vectors answer (similar_to,
    version, encoder) for similar papers and researchers."""
    backend = backend_for(collection, "semantic")
    if not isinstance(backend, VectorBackend):
        raise TypeError(f"{collection.name}'s search by meaning is not a vector backend")
    return backend


def _make_mode(collection: Collection, mode: str) -> SearchBackend:
    if mode == "keyword":
        return _make(collection, _configuration())
    if mode == "semantic":
        return _make_vector(collection, _vector_configuration())
    return HybridBackend(
        collection,
        keyword=backend_for(collection, "keyword"),
        semantic=vector_backend_for(collection),
    )


def _make_vector(collection: Collection, configuration: tuple[Any, ...]) -> SearchBackend:
    backend = _make_vector_engine(collection, configuration)
    # Which of a query's words are in the collection's vocabulary is the keyword engine's to
    # say (wovepaper.lib.search.evidence); the configured one, looked up at each asking.
    backend.vocabulary = lambda words: backend_for(collection, "keyword").words_held(words)
    backend.keyword_matching = lambda query, ids: backend_for(collection, "keyword").matching(
        query, ids
    )
    return backend


def _make_vector_engine(collection: Collection, configuration: tuple[Any, ...]) -> VectorBackend:
    engine, directory, _, delta_max, alias = configuration
    if engine == "exact":
        return ExactVectorBackend(collection, collection.vectors)
    if engine == "pgvector":
        return PgvectorBackend(collection, collection.vectors, alias=alias)
    return UsearchBackend(
        collection, collection.vectors, directory=Path(directory), delta_max=delta_max
    )


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
