"""What papers shows of the apps above it in the layer order (docs/layers.toml), each filled in
by that app's `ready()`: papers never imports researchers or institutions, and reads their part
of a byline, a paper page or a filter through these."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet

# (researcher id, slug) → the researcher's page path (researchers.apps).
researcher_path: Callable[[int, str], str] | None = None
# paper id → {authorship id: [institution, ...]}, in the order the page lists them
# (institutions.apps).
authorship_institutions: Callable[[int], dict[int, list[Any]]] | None = None
# institution id → the ids of the papers with an authorship affiliated to it, as a subquery
# (institutions.apps).
institution_paper_ids: Callable[[int], QuerySet] | None = None


class NotRegistered(LookupError):
    """An app above papers did not fill in its part (its ready() did not run)."""


def registered(name: str) -> Callable:
    found = globals()[name]
    if found is None:
        raise NotRegistered(f"papers.registry.{name}: filled in by an installed app's ready()")
    return found
