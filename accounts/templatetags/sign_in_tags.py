"""The sign-in services this site's code can use, whether or not their keys are set."""

from __future__ import annotations

from allauth.socialaccount.providers import registry
from django import template

register = template.Library()

# allauth calls ORCID "Orcid.org".
NAMES = {"orcid": "ORCID", "github": "GitHub"}
# The environment variables that set each service up (wovepaper.settings).
PROVIDER_KEYS = {
    "orcid": "ORCID_CLIENT_ID, ORCID_CLIENT_SECRET",
    "github": "GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET",
}


@register.simple_tag
def sign_in_providers() -> list[dict[str, str]]:
    """Every installed provider, ORCID first: its name and the settings that switch it on."""
    installed = sorted(registry.get_class_list(), key=lambda p: (p.id != "orcid", p.name))
    return [
        {"name": NAMES.get(p.id, p.name), "keys": PROVIDER_KEYS.get(p.id, "")} for p in installed
    ]
