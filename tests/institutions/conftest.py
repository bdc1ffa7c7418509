from tests.researchers.conftest import (  # noqa: F401  (fixtures shared with researchers)
    api_settings,
    clean_cache,
    local_server,
    sources,
)
