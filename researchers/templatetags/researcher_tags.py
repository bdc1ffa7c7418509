"""Researchers shown on other apps' pages: institutions never import researchers, their
templates ask here."""

from __future__ import annotations

from django import template

from institutions.models import Institution
from researchers.models import Researcher
from researchers.selectors import researchers_at_institution

register = template.Library()


@register.simple_tag
def institution_researchers(institution: Institution) -> list[Researcher]:
    """`{% institution_researchers institution as researchers %}`: the institution's card."""
    return researchers_at_institution(institution)
