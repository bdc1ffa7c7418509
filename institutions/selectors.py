"""Reads about institutions shared by pages, the API and feeds."""

from __future__ import annotations

import re

from .models import Institution

# ROR ids: a zero, six base-32 characters and a two-digit checksum. Database ids never start
# with a zero, so one URL segment can carry either.
ROR_ID = re.compile(r"^0[a-z0-9]{6}[0-9]{2}$")


def institution_get(key: str | int) -> Institution | None:
    """The institution with this id or ROR id (bare, e.g. `042nb2s44`), or None."""
    key = str(key).strip()
    if ROR_ID.match(key):
        return Institution.objects.filter(ror_id=key).first()
    if key.isdigit() and len(key) <= 18:
        return Institution.objects.filter(pk=int(key)).first()
    return None
