"""JSON-LD (schema.org) pieces shared by the pages; each page adds its own main entity."""

from __future__ import annotations

from django.conf import settings


def jsonld_with_breadcrumbs(entity: dict, trail: list[tuple[str, str]]) -> dict:
    """A JSON-LD document holding `entity` and a BreadcrumbList from the site's home down
    `trail` ([(name, path), …], the last one being the page itself)."""
    crumbs = [("wovepaper", "/"), *trail]
    items = [
        {"@type": "ListItem", "position": position, "name": name, "item": settings.SITE_URL + path}
        for position, (name, path) in enumerate(crumbs, start=1)
    ]
    return {
        "@context": "https://schema.org",
        "@graph": [entity, {"@type": "BreadcrumbList", "itemListElement": items}],
    }
