"""Hostile input to the newer surfaces (the conflict check, library imports, claims, saved
searches, a researcher's own page): each is refused or answered, never a 500, and within the
sweep's time budget for every request (tests/sweep/conftest.py). Files and bodies are the ones
an independent sweep found taking a worker down (issue 44), and what is like them."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token

from accounts.library.lists import reading_list_default
from accounts.library.models import LibraryImport
from accounts.ownership.claims import researcher_claim
from accounts.ownership.reviews import claim_review
from researchers.models import Researcher
from researchers.names import name_key

pytestmark = pytest.mark.django_db

HOSTILE_FILES = {
    "nul-in-doi.bib": b"@article{k, doi={10.1234/ab\x00cd}, title={x}}",
    "nul-in-doi.ris": b"TY  - JOUR\r\nDO  - 10.1234/a\x00b\r\nTI  - x\r\nER  - \r\n",
    "two-ty-no-er.ris": b"TY  - JOUR\r\nTI  - x\r\nTY  - JOUR\r\nTI  - x\r\n",
    "broken-blocks.bib": b"@a{" * 800_000,
    "broken-blocks-on-lines.bib": b"@a{\n" * 20_000,
    "many-ris-entries.ris": b"TY  - JOUR\nTI  - x\nER  - \n" * 6_000,
    "nested-braces.bib": b"@article{k, title={" + b"{" * 200_000 + b"}",
    "binary.bib": bytes(range(256)) * 4000,
    "utf16.bib": "@article{k, title={x}}".encode("utf-16"),
    "empty.ris": b"",
    "controls-only.bib": b"\x01\x02\x03\x1b[2J" * 1000,
}


@pytest.fixture
def reader(db):
    user = get_user_model().objects.create_user("hostile", "h@example.org", "pw-h-123456")
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return user, client


def test_hostile_files_to_the_import_are_answered_never_a_500(reader, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "imports": "1000/hour"}
    user, client = reader
    reading_list = reading_list_default(user=user)
    answers = {}
    for name, data in HOSTILE_FILES.items():
        upload = SimpleUploadedFile(name, data)
        answers[name] = client.post(
            f"/me/library/{reading_list.pk}/import", {"file": upload}, follow=True
        )
    assert {n: r.status_code for n, r in answers.items() if r.status_code != 200} == {}
    # Each file became a job its page reports on: read (or refused with the reason), none left.
    assert not LibraryImport.objects.filter(status__in=["queued", "running"]).exists()
    assert "more than the 5,000 an import reads" in answers["broken-blocks.bib"].content.decode()
    assert "6,000 blocks" in answers["many-ris-entries.ris"].content.decode()
    too_big = SimpleUploadedFile("big.bib", b"%" * (settings.REQUEST_MAX_BODY_BYTES + 1))
    assert (
        client.post(f"/me/library/{reading_list.pk}/import", {"file": too_big}).status_code == 413
    )


def test_hostile_conflict_checks_are_answered_small_never_a_500(reader, settings):
    user, client = reader
    Researcher.objects.create(display_name="Ilya Sutskever", name_key=name_key("Ilya Sutskever"))
    api = Client(
        raise_request_exception=False,
        HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}",
    )
    bodies = {
        "repeated": {"authors": ["Ilya Sutskever"] * 100, "reviewers": ["Ilya Sutskever"] * 1000},
        "too many": {"authors": ["A"], "reviewers": [f"Name Number{i}" for i in range(1001)]},
        "not strings": {"authors": [1, {"a": 2}], "reviewers": [None]},
        "years": {"authors": ["A"], "reviewers": ["B"], "years": 10**30},
        "long lines": {"authors": ["x" * 100_000], "reviewers": ["y" * 100_000]},
    }
    answers = {
        name: api.post("/api/v1/conflicts/", json.dumps(body), content_type="application/json")
        for name, body in bodies.items()
    }
    assert {n: r.status_code for n, r in answers.items()} == {
        "repeated": 200,
        "too many": 400,
        "not strings": 400,
        "years": 400,
        "long lines": 200,
    }
    assert len(answers["repeated"].content) < 5_000
    huge = json.dumps({"reviewers": ["x" * 1000] * 3000})
    answer = api.post("/api/v1/conflicts/", huge, content_type="application/json")
    assert answer.status_code == 413 and answer.json()["error"]["code"] == "too_large"
    page = client.post(
        "/conflicts",
        {"authors": "Ilya Sutskever", "reviewers": "\n".join(["x"] * 200_000), "years": 3},
    )
    assert page.status_code == 400


def test_hostile_numbers_and_dates_on_the_readers_pages(reader, settings):
    user, client = reader
    record = Researcher.objects.create(display_name="Ada Lovelace")
    claim_review(claim=researcher_claim(user=user, researcher=record), reviewer=None, confirm=True)
    for page in ("99999999999999999999", "-1", "1e9", "\u0661"):
        answer = client.get(f"/me/researchers/{record.pk}", {"page": page})
        assert answer.status_code == 200, page
    client.post("/me/searches", {"q": "graphs", "mode": "keyword", "date_to": "9999-12-31"})
    from accounts.library import alerts
    from accounts.library.models import SavedSearch

    for saved in SavedSearch.objects.filter(user=user):
        alerts.saved_search_check(saved=saved)
    answers = [
        client.post(f"/following/researchers/{record.pk}/claim", {"message": "m" * 100_000})
        for _ in range(3)
    ]
    assert all(a.status_code < 500 for a in answers)
