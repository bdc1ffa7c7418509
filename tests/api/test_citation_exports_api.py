"""Citation exports through the API (`…/cite.bib|.ris|.json`): the site's files, with a token
or a session, under the API's throttles, read back by the real parsers the suite uses
(bibtexparser, rispy, citeproc-py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
import rispy
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.library.lists import paper_save, reading_list_create
from papers.models import Authorship
from tests.papers.test_citation_export import csl_bibliography, parse_bibtex

pytestmark = pytest.mark.django_db

TYPES = {
    "bib": "application/x-bibtex",
    "ris": "application/x-research-info-systems",
    "json": "application/vnd.citationstyles.csl+json",
}


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def make_user(name: str = "reader"):
    return get_user_model().objects.create_user(name, f"{name}@example.org", "a long passphrase")


@pytest.mark.parametrize("extension", ["bib", "ris", "json"])
def test_paper_export_is_the_sites_file_anonymous_or_with_a_token(client, preprint, extension):
    site = client.get(f"/papers/2401.00042/cite.{extension}")
    for api in (APIClient(), token_client(make_user())):
        response = api.get(f"/api/v1/papers/2401.00042/cite.{extension}")
        assert response.status_code == 200
        assert response["Content-Type"] == f"{TYPES[extension]}; charset=utf-8"
        assert response.content == site.content
        assert response["Content-Disposition"] == site["Content-Disposition"]


def test_paper_export_reads_back_through_bibtex_ris_and_csl(published):
    api = APIClient()
    (entry,) = parse_bibtex(api.get("/api/v1/papers/2305.01234/cite.bib").content.decode()).entries
    fields = {name: field.value for name, field in entry.fields_dict.items()}
    assert entry.entry_type == "article" and entry.key == "lovelace2023measuring"
    assert fields["eprint"] == "2305.01234" and fields["archivePrefix"] == "arXiv"
    assert fields["primaryClass"] == "hep-ex" and fields["doi"] == "10.1103/PhysRevD.97.052003"

    ris_text = api.get("/api/v1/papers/2305.01234/cite.ris").content.decode()
    (record,) = rispy.loads(ris_text, skip_unknown_tags=True)
    assert record["type_of_reference"] == "JOUR"
    assert record["doi"] == "10.1103/PhysRevD.97.052003"
    assert record["accession_number"] == "arXiv:2305.01234"
    assert record["authors"] == ["Lovelace, Ada", "Turing, Alan"]

    csl = api.get("/api/v1/papers/2305.01234/cite.json").content.decode()
    (rendered,) = csl_bibliography(csl)
    assert "Lovelace" in rendered and "Measuring things carefully" in rendered


def test_asking_for_the_files_type_is_not_refused_and_errors_stay_json(preprint):
    api = APIClient()
    bib = api.get("/api/v1/papers/2401.00042/cite.bib", HTTP_ACCEPT=TYPES["bib"])
    assert bib.status_code == 200 and bib.content.startswith(b"@misc{orsted2024bounds,")
    missing = api.get("/api/v1/papers/2401.99999/cite.bib", HTTP_ACCEPT=TYPES["bib"])
    assert missing.status_code == 404
    assert missing["Content-Type"] == "application/json"
    assert missing.json()["error"]["code"] == "not_found"
    old_style = api.get("/api/v1/papers/2401.00042v3/cite.ris")
    assert old_style.status_code == 200 and b"AN  - arXiv:2401.00042" in old_style.content


def test_researcher_export_cut_at_the_bound_and_merged_ids_redirect(
    paper_factory, researcher_factory, monkeypatch
):
    from researchers.api import exports

    ada = researcher_factory("Ada Lovelace")
    merged = researcher_factory("A. Lovelace", merged_into=ada)
    for year, word in [(2020, "alpha"), (2021, "beta"), (2022, "gamma")]:
        paper = paper_factory(title=f"Paper {word}", published=datetime(year, 1, 1, tzinfo=UTC))
        Authorship.objects.filter(paper=paper, position=1).update(researcher=ada)
    monkeypatch.setattr(exports, "CITATION_EXPORT_MAX", 2)
    api = APIClient()
    response = api.get(f"/api/v1/researchers/{ada.pk}/cite.bib")
    assert response.status_code == 200
    text = response.content.decode()
    titles = [e.fields_dict["title"].value for e in parse_bibtex(text).entries]
    assert titles == ["Paper gamma", "Paper beta"]
    assert response["X-Export-Note"] == (
        "The newest 2 papers of Ada Lovelace; older ones are not in this export."
    )
    moved = api.get(f"/api/v1/researchers/{merged.pk}/cite.json")
    assert moved.status_code == 301
    assert moved["Location"] == f"/api/v1/researchers/{ada.pk}/cite.json"
    assert api.get("/api/v1/researchers/999999/cite.bib").status_code == 404


def test_search_export_holds_what_the_api_search_lists(paper_factory):
    paper_factory(title="Quaternion algebras", arxiv_id="2401.00777")
    paper_factory(title="Quaternion orders", arxiv_id="2401.00778")
    paper_factory(title="Unrelated topology")
    api = APIClient()
    query = {"q": "quaternion", "mode": "keyword", "sort": "newest"}
    listed = [p["arxiv_id"] for p in api.get("/api/v1/search/papers/", query).json()["results"]]
    response = api.get("/api/v1/search/papers/cite.json", query)
    assert response.status_code == 200
    assert [item["number"] for item in json.loads(response.content)] == listed
    assert listed == ["2401.00778", "2401.00777"]
    refused = api.get("/api/v1/search/papers/cite.bib", {"q": "x", "page": "0"})
    assert refused.status_code == 400 and "page" in refused.json()["error"]["fields"]


def test_list_export_is_private_and_only_the_owners(client, paper_factory, preprint, published):
    owner, other = make_user("owner"), make_user("other")
    reading_list = reading_list_create(user=owner, name="Entropy")
    paper_save(user=owner, paper=published, reading_list=reading_list)
    paper_save(user=owner, paper=preprint, reading_list=reading_list)
    url = f"/api/v1/me/lists/{reading_list.pk}/cite.bib"

    assert APIClient().get(url).status_code == 401
    assert token_client(other).get(url).status_code == 404
    response = token_client(owner).get(url)
    assert response.status_code == 200
    assert response["Cache-Control"] == "private, no-store"
    keys = [entry.key for entry in parse_bibtex(response.content.decode()).entries]
    assert keys == ["orsted2024bounds", "lovelace2023measuring"]  # saved last first
    # The site's file for the same list, signed in with a session, is the same file.
    client.force_login(owner)
    assert client.get(f"/me/library/{reading_list.pk}/cite.bib").content == response.content
    session = APIClient()
    session.force_login(owner)
    assert session.get(url).content == response.content


def test_list_export_says_where_it_was_cut(preprint, published, monkeypatch):
    from accounts.library.api import lists

    owner = make_user()
    reading_list = reading_list_create(user=owner, name="Two")
    paper_save(user=owner, paper=published, reading_list=reading_list)
    paper_save(user=owner, paper=preprint, reading_list=reading_list)
    monkeypatch.setattr(lists, "LIST_EXPORT_MAX", 1)
    response = token_client(owner).get(f"/api/v1/me/lists/{reading_list.pk}/cite.ris")
    (record,) = rispy.loads(response.content.decode(), skip_unknown_tags=True)
    assert record["accession_number"] == "arXiv:2401.00042"
    assert response["X-Export-Note"].startswith("The 1 papers saved last in Two")


@override_settings(API_THROTTLE_RATES={"anon": "2/minute", "user": "3/minute"})
def test_exports_count_against_the_api_rates(preprint):
    anonymous = APIClient()
    for _ in range(2):
        assert anonymous.get("/api/v1/papers/2401.00042/cite.bib").status_code == 200
    throttled = anonymous.get("/api/v1/search/papers/cite.bib", {"q": "entropy"})
    assert throttled.status_code == 429 and throttled.has_header("Retry-After")
    assert throttled.json()["error"]["code"] == "throttled"
    reader = token_client(make_user())
    for _ in range(3):
        assert reader.get("/api/v1/papers/2401.00042/cite.json").status_code == 200
    assert reader.get("/api/v1/papers/2401.00042/cite.json").status_code == 429


def test_exports_are_in_the_schema_with_their_three_types(api):
    schema = api.get("/openapi.json").json()
    for path in (
        "/api/v1/papers/{arxiv_id}/cite.{extension}",
        "/api/v1/researchers/{id}/cite.{extension}",
        "/api/v1/search/papers/cite.{extension}",
        "/api/v1/me/lists/{list_id}/cite.{extension}",
    ):
        ok = schema["paths"][path]["get"]["responses"]["200"]
        assert set(ok["content"]) == set(TYPES.values()), path
