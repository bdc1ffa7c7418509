"""Citation fetches ask Semantic Scholar and OpenAlex: their recorded answers, served on
127.0.0.1 by tests/sources/conftest.py's fixtures."""

from __future__ import annotations

from tests.sources.conftest import (  # noqa: F401  (the recorded sources)
    api_settings,
    clean_cache,
    local_server,
)
