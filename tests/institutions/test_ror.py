"""Completing institutions from ROR: recorded v2 records served over HTTP."""

from __future__ import annotations

import pytest

from institutions.clients.ror import RorClient, parse_organization
from institutions.models import Institution
from institutions.services import institutions_complete_from_ror
from tests.sources.conftest import load
from wovepaper.lib.http import ServiceError


def ror_records() -> dict[str, dict]:
    records = [
        load("ror/record_v2_02atag894_from_es_retrieve.json"),
        *load("ror/records_v2_from_es_search.json"),
    ]
    return {r["id"].rsplit("/", 1)[1]: r for r in records}


def test_parse_v2_record_names_acronyms_relations():
    record = parse_organization(ror_records()["00rqy9422"])
    assert record.name == "University of Queensland"
    assert record.acronyms == ("UQ",)
    assert record.types == ("education",) and record.country_code == "AU"
    assert sum(1 for r in record.relationships if r.type == "child") == 6
    office = parse_organization(ror_records()["02atag894"])
    assert office.name == "Office of Nuclear Physics" and office.acronyms == ("NP",)
    assert [(r.type, r.ror_id, r.label) for r in office.relationships] == [
        ("parent", "00mmn6b08", "Office of Science")
    ]
    with pytest.raises(ValueError):
        parse_organization({"id": "x"})


@pytest.mark.django_db
def test_institutions_are_completed_once(sources, clean_cache):
    sources.ror_records.update(ror_records())
    uq = Institution.objects.create(name="The University of Queensland", ror_id="00rqy9422")
    office = Institution.objects.create(name="Office of Nuclear Physics (DOE)", ror_id="02atag894")
    gone = Institution.objects.create(name="Somewhere", ror_id="0aaaaaa00")
    assert institutions_complete_from_ror() == 2
    uq.refresh_from_db()
    assert uq.name == "University of Queensland" and uq.acronyms == ["UQ"]
    assert uq.types == ["education"] and uq.type == "education" and uq.country_code == "AU"
    assert uq.city == "Brisbane" and uq.ror_status == "active"
    assert len(uq.children) == 6 and uq.parents == []
    office.refresh_from_db()
    assert office.parents == [
        {"type": "parent", "ror_id": "00mmn6b08", "label": "Office of Science"}
    ]
    assert office.established == 1996 and office.website == "https://science.osti.gov/np"
    gone.refresh_from_db()
    assert gone.ror_status == "unknown" and gone.ror_checked_at is not None
    asked = sources.count("/ror/organizations/")
    assert asked == 3
    assert institutions_complete_from_ror() == 0
    assert sources.count("/ror/organizations/") == asked  # once per institution
    request, _ = sources.server.log[-1]
    assert request.headers["Client-Id"] == "test-client"


@pytest.mark.django_db
def test_ror_unreachable_leaves_institutions_for_later(api_settings, clean_cache):
    api_settings.ROR_API_URL = "http://127.0.0.1:9/ror"
    inst = Institution.objects.create(name="Monash", ror_id="02bfwt286")
    with pytest.raises(ServiceError, match="ROR: unreachable"):
        institutions_complete_from_ror()
    inst.refresh_from_db()
    assert inst.ror_checked_at is None and inst.name == "Monash"
    with RorClient() as client, pytest.raises(ServiceError):
        client.organization("02bfwt286")
