"""ROR API (schema v2): one organisation record by its ROR id.

`parse_organization` is pure and returns a dataclass; `RorClient` is the network part.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from wovepaper.lib.http import ServiceClient, only_set, parsed_answer

SERVICE = "ROR"


@dataclass(frozen=True, slots=True)
class RorRelationship:
    type: str  # parent, child, related, predecessor, successor
    ror_id: str  # bare
    label: str


@dataclass(frozen=True, slots=True)
class RorOrganization:
    ror_id: str  # bare, e.g. 02atag894
    name: str
    aliases: tuple[str, ...]
    labels: tuple[str, ...]
    acronyms: tuple[str, ...]
    types: tuple[str, ...]
    status: str
    country_code: str
    city: str
    established: int | None
    website: str
    relationships: tuple[RorRelationship, ...]


def bare_ror_id(value: str | None) -> str:
    value = (value or "").strip().rstrip("/")
    if "ror.org/" in value:
        value = value.rsplit("ror.org/", 1)[1]
    return value.lower()


def parse_organization(data: dict) -> RorOrganization:
    """A v2 organisation record. The display name is the `names[]` entry typed `ror_display`."""
    if not isinstance(data, dict) or not data.get("id") or not isinstance(data.get("names"), list):
        raise ValueError("not a ROR v2 organisation record")
    names = data["names"]

    def of_type(kind: str) -> tuple[str, ...]:
        return tuple(n["value"] for n in names if kind in (n.get("types") or []) and n.get("value"))

    display = of_type("ror_display")
    labels = of_type("label")
    location = ((data.get("locations") or [{}])[0] or {}).get("geonames_details") or {}
    website = next(
        (
            link.get("value", "")
            for link in data.get("links") or []
            if link.get("type") == "website"
        ),
        "",
    )
    established = data.get("established")
    return RorOrganization(
        ror_id=bare_ror_id(data["id"]),
        name=(display or labels or (names[0].get("value", ""),))[0],
        aliases=of_type("alias"),
        labels=tuple(label for label in labels if label not in display),
        acronyms=of_type("acronym"),
        types=tuple(data.get("types") or ()),
        status=data.get("status") or "",
        country_code=(location.get("country_code") or "")[:2].upper(),
        city=location.get("name") or "",
        established=established if isinstance(established, int) else None,
        website=website,
        relationships=tuple(
            RorRelationship(
                type=r.get("type", ""), ror_id=bare_ror_id(r.get("id")), label=r.get("label", "")
            )
            for r in data.get("relationships") or []
            if r.get("id")
        ),
    )


class RorClient(ServiceClient):
    service = SERVICE

    def __init__(self, **kwargs):
        kwargs.setdefault("base_url", settings.ROR_API_URL)
        kwargs.setdefault("rate", settings.ROR_RATE)
        super().__init__(headers=only_set({"Client-Id": settings.ROR_CLIENT_ID}), **kwargs)

    def organization(self, ror_id: str) -> RorOrganization | None:
        """The record for a ROR id, or None if ROR does not know the id."""
        response = self.request(
            "GET", f"organizations/{bare_ror_id(ror_id)}", ok_statuses=frozenset({200, 404})
        )
        if response.status_code == 404:
            return None
        return parsed_answer(self.service, response, parse_organization, f"answer for {ror_id}")
