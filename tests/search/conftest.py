from __future__ import annotations

import pytest

from institutions.models import Institution
from institutions.name_search import INSTITUTIONS
from papers.models import Paper
from papers.search import PAPERS
from researchers.models import Researcher
from researchers.name_search import RESEARCHERS
from tests.researchers.conftest import link_author, researcher_factory  # noqa: F401  (shared fixtures)
from wovepaper.lib.search import backend_for, reset_backends

ENGINES = ["database", "tantivy"]


@pytest.fixture(params=ENGINES)
def engine(request, settings, tmp_path, db):
    """Each contract test runs once per engine. `engine()` brings the engine's index up to
    date with the database, as the indexer would after commit (the database engine keeps its
    own index: nothing to do)."""
    settings.SEARCH_ENGINE = request.param
    settings.SEARCH_INDEX_DIR = tmp_path / "search-index"
    reset_backends()

    def sync() -> None:
        for collection, model in (
            (PAPERS, Paper),
            (RESEARCHERS, Researcher),
            (INSTITUTIONS, Institution),
        ):
            backend_for(collection).index(list(model.objects.values_list("pk", flat=True)))

    sync.name = request.param  # type: ignore[attr-defined]
    yield sync
    reset_backends()
