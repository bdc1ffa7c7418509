"""Researchers shown on other apps' pages: institutions never import researchers, their
templates ask here."""

from __future__ import annotations

from django import template

from institutions.models import Institution
from researchers.institution_members import institution_members
from researchers.models import Researcher

register = template.Library()
# Researchers on an institution's card; its researchers page lists them all.
CARD = 12


@register.simple_tag
def institution_researchers(institution: Institution) -> list[tuple[Researcher, int]]:
    """`{% institution_researchers institution as researchers %}`: the institution's card, the
    first CARD of its researchers with their papers there (the rest on its researchers page)."""
    return institution_members(institution, limit=CARD)
