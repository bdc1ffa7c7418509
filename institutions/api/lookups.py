"""What the API's institution operations find from their arguments."""

from __future__ import annotations

from django.http import Http404

from institutions.models import Institution
from institutions.selectors import institution_get


def institution_or_404(key: str) -> Institution:
    """The institution a route's `api_institution` key names (its id or ROR id), or a 404."""
    institution = institution_get(key)
    if institution is None:
        raise Http404("No institution with that id or ROR id.")
    return institution
