"""The OpenAPI schema: complete, valid, and true to what the API answers (schemathesis)."""

from __future__ import annotations

import json
import os
import re

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.core import signals
from django.db import close_old_connections
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS

from papers.ingest.importing import snapshot_import
from papers.models import Authorship, Paper
from researchers.models import Researcher
from wovepaper.wsgi import application

pytestmark = pytest.mark.django_db

# Examples per operation, per mode and per client: bounded for CI (about 1,500 cases in all);
# SCHEMATHESIS_EXAMPLES=200 makes a deeper run by hand, as the hardening sweep did (~14,000 cases).
EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "25"))
# CI generates the same cases on every run, so a red run is a change's doing, never the draw;
# SCHEMATHESIS_RANDOM=1 draws new ones (what a sweep by hand does, with more examples).
DERANDOMIZE = not os.environ.get("SCHEMATHESIS_RANDOM")


def test_public_reads_show_no_padlock_and_the_readers_own_operations_do(client):
    """Swagger UI draws a padlock on every operation with a security requirement: public
    reads say they need none (`security: []`); /me/ and the conflict check need a token or
    the session."""
    schema = client.get("/openapi.json").json()
    public, private = [], []
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            own = path.startswith("/api/v1/me/") or path.startswith("/api/v1/conflicts/")
            (private if own else public).append((method, path, operation.get("security")))
    assert public and all(security == [] for _, _, security in public), [
        p for p in public if p[2] != []
    ]
    assert private and all(security for _, _, security in private)


def test_schema_is_openapi_3_with_every_operation_described(client):
    response = client.get("/openapi.json")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi+json") or response[
        "Content-Type"
    ].startswith("application/json")
    schema = json.loads(response.content)
    assert schema["openapi"].startswith("3.")
    operations = [
        (path, method, op) for path, item in schema["paths"].items() for method, op in item.items()
    ]
    assert {path for path, _, _ in operations} >= {
        "/api/v1/papers/",
        "/api/v1/papers/{arxiv_id}/",
        "/api/v1/papers/{arxiv_id}/references/",
        "/api/v1/papers/{arxiv_id}/citations/",
        "/api/v1/researchers/",
        "/api/v1/researchers/{id}/",
        "/api/v1/researchers/{id}/papers/",
        "/api/v1/researchers/{id}/same-name/",
        "/api/v1/institutions/{key}/",
        "/api/v1/institutions/{key}/papers/",
        "/api/v1/institutions/{key}/researchers/",
        "/api/v1/search/papers/",
        "/api/v1/search/researchers/",
        "/api/v1/search/institutions/",
    }
    for path, method, op in operations:
        assert op.get("summary") and op.get("description"), (method, path)
        assert "429" in op["responses"], (method, path)
        for parameter in op.get("parameters", []):
            assert parameter.get("description"), (method, path, parameter["name"])
    error = schema["components"]["schemas"]["Error"]
    assert error["properties"]["error"]["$ref"].endswith("/ErrorDetail")


@pytest.fixture
def loaded_site(db, fixtures_dir, researcher_factory, institution_factory):
    """The first 200 lines of the real arXiv snapshot, some authors matched."""
    snapshot_import(fixtures_dir / "arxiv-snapshot" / "first200.jsonl")
    assert Paper.objects.count() >= 150
    survivor = researcher_factory("C. Balázs", paper_count=1)
    researcher_factory("Csaba Balazs", merged_into=survivor)
    institution = institution_factory(
        "Michigan State University", country_code="US", ror_id="05hs6h993", paper_count=1
    )
    for authorship in Authorship.objects.filter(paper__arxiv_id="0704.0001", position=1):
        authorship.researcher = survivor
        authorship.save()
        authorship.institution_links.create(institution=institution, paper=authorship.paper)


@pytest.fixture
def api_schema(loaded_site):
    # Served by the real WSGI handler. Like Django's test client, keep the handler from closing
    # the database connection at the end of each request: the test's transaction lives on it.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        with override_settings(API_THROTTLE_RATES={"anon": "100000/minute", "user": None}):
            yield schemathesis.openapi.from_wsgi("/openapi.json", application)
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def api_token(db):
    user = get_user_model().objects.create_user(
        "schema-reader", "schema-reader@example.org", "a long passphrase"
    )
    return Token.objects.create(user=user).key


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize("signed_in", [False, True], ids=["anonymous", "token"])
def test_api_conforms_to_its_schema(api_schema, api_token, mode, signed_in):
    """Every operation, with generated parameters valid (positive) and not (negative), anonymous
    and with a token: every one of schemathesis's checks holds (no server error; status, content
    type, headers and body as documented; valid data accepted, invalid data refused)."""
    all_checks = CHECKS.get_all()
    headers = {"Authorization": f"Token {api_token}"} if signed_in else {}
    failures = {}
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 12
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES,
            derandomize=DERANDOMIZE,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case):
            # A cursor is a signed position only the server issues: no generated string is one,
            # so a generated cursor is dropped (test_forged_cursors.py sends forged ones).
            if case.query:
                case.query.pop("cursor", None)
            case.call_and_validate(headers=headers, checks=all_checks)

        try:
            check()
        except Exception as exc:  # noqa: BLE001 - collected and reported below, per operation
            failures[operation.label] = str(exc)[:3000]
    assert not failures, "\n\n".join(f"{label}:\n{text}" for label, text in failures.items())


def test_schema_paper_example_is_what_the_api_answers(api, fixtures_dir):
    from papers.api.examples import paper_example, paper_search_example

    snapshot_import(fixtures_dir / "arxiv-snapshot" / "first200.jsonl")
    host = {"HTTP_HOST": "127.0.0.1:8000"}  # API links use the host asked; SITE_URL's here
    body = api.get("/api/v1/papers/0704.0001/", **host).json()
    example = paper_example(detail=True)
    body.pop("modified_at"), example.pop("modified_at")
    assert body == example
    listed = api.get("/api/v1/search/papers/", {"q": "diphoton Tevatron"}, **host).json()["results"]
    assert listed[0] == paper_search_example()


@pytest.mark.parametrize(
    "url, field",
    [
        ("/api/v1/institutions/?country=", "country"),
        ("/api/v1/papers/?published_from=", "published_from"),
        ("/api/v1/papers/?published_to=", "published_to"),
        ("/api/v1/papers/?category=", "category"),
        ("/api/v1/papers/?researcher=3.0", "researcher"),
        ("/api/v1/papers/?researcher=1&researcher=2", "researcher"),
        ("/api/v1/papers/?page_size=5_0", "page_size"),
        ("/api/v1/search/papers/?q=" + "a" * 495 + "%20" * 10, "q"),
        ("/api/v1/search/researchers/?q=" + "a" * 250 + "%00" * 10, "q"),
    ],
)
def test_what_the_schema_calls_invalid_is_a_400(api, url, field):
    """Empty, padded, repeated or loosely written values the schema forbids were answered 200."""
    response = api.get(url)
    assert response.status_code == 400, response.content[:300]
    assert field in response.json()["error"]["fields"]


def test_follow_list_schema_is_the_page_it_answers(api):
    schema = api.get("/openapi.json").json()
    ok = schema["paths"]["/api/v1/me/follows/"]["get"]["responses"]["200"]
    ref = ok["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert set(schema["components"]["schemas"][ref]["properties"]) == {
        "count",
        "next",
        "previous",
        "results",
    }
    user = get_user_model().objects.create_user("f", "f@example.org", "a long passphrase")
    api.force_authenticate(user)
    assert set(api.get("/api/v1/me/follows/").json()) == {"count", "next", "previous", "results"}
    assert api.get("/api/v1/me/follows/", {"page_size": "x"}).status_code == 400
    assert api.get("/api/v1/me/follows/", {"page": ""}).status_code == 400
    assert api.get("/api/v1/me/follows/", {"page": "1"}).status_code == 200


# Every GET operation of the public API over the loaded snapshot, as a generated strict client
# would read it: the real answer validated against the response schema /openapi.json gives
# for its status, with openapi-schema-validator (JSON Schema 2020-12 as OpenAPI 3.1 uses it).
STRICT_READS = [
    "/api/v1/papers/",
    "/api/v1/papers/?category=hep-ph",
    "/api/v1/papers/0704.0001/",
    "/api/v1/papers/0704.0002/",
    "/api/v1/papers/0704.0001/references/",
    "/api/v1/papers/0704.0001/citations/",
    "/api/v1/search/papers/?q=photon",
    "/api/v1/search/researchers/?q=balazs",
    "/api/v1/search/institutions/?q=michigan",
    "/api/v1/researchers/",
    "/api/v1/institutions/",
    "/api/v1/institutions/05hs6h993/",
    "/api/v1/institutions/05hs6h993/papers/",
    "/api/v1/institutions/05hs6h993/researchers/",
]


def _response_schema(spec: dict, path: str, status: int) -> dict:
    """The response schema of the operation that `path` reaches, with the spec's components
    beside it so that its references resolve."""
    bare = path.split("?")[0]
    for template, item in spec["paths"].items():
        pattern = re.sub(r"\{[^}]+\}", "[^/]+", template)
        if re.fullmatch(pattern, bare):
            content = item["get"]["responses"][str(status)]["content"]
            schema = next(iter(content.values()))["schema"]
            return {**schema, "components": spec["components"]}
    raise AssertionError(f"no operation of the schema reaches {path}")


def test_every_read_answers_as_a_strict_client_of_the_schema_expects(api, loaded_site):
    from openapi_schema_validator import OAS31Validator

    spec = api.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.1")
    from openapi_spec_validator import validate

    validate(spec)
    researcher = Researcher.objects.filter(merged_into=None).get(display_name="C. Balázs")
    reads = [
        *STRICT_READS,
        f"/api/v1/researchers/{researcher.pk}/",
        f"/api/v1/researchers/{researcher.pk}/papers/",
        f"/api/v1/researchers/{researcher.pk}/same-name/",
        f"/api/v1/researchers/{researcher.pk}/identity/",
    ]
    nulls = 0
    invalid = {}
    for path in reads:
        response = api.get(path)
        assert response.status_code == 200, (path, response.status_code)
        body = response.json()
        nulls += json.dumps(body).count('"researcher": null')
        errors = list(OAS31Validator(_response_schema(spec, path, 200)).iter_errors(body))
        if errors:
            invalid[path] = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in errors[:3]]
    assert invalid == {}
    # The case a 3.0 schema could not describe is among what was checked.
    assert nulls > 0


def test_blank_text_the_api_accepts_is_valid_by_its_schema(client, api):
    """A note or a category may be blank: the schema said `oneOf` [text, empty text], which ""
    matches twice, so a strict client refused what the API answers 201 to."""
    from jsonschema import Draft202012Validator

    schema = json.loads(client.get("/openapi.json").content)
    components = schema["components"]["schemas"]
    note = components["NoteInputRequest"]["properties"]["note"]
    category = components["SavedSearchInputRequest"]["properties"]["category"]
    for field, blank_ok, bad in ((note, "", "a\x00b"), (category, "", "not a category!")):
        validator = Draft202012Validator(field)
        assert validator.is_valid(blank_ok), field
        assert validator.is_valid("cs.LG")
        assert not validator.is_valid(bad)
    api.force_authenticate(get_user_model().objects.create_user("blank", password="x"))
    created = api.post("/api/v1/me/searches/", {"query": "graphs", "category": ""}, format="json")
    assert created.status_code == 201, created.content


def test_every_operation_documents_the_servers_414(client):
    schema = json.loads(client.get("/openapi.json").content)
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            assert "414" in operation["responses"], (method, path)


def test_a_text_longer_than_its_schema_allows_is_refused_before_it_is_trimmed(api):
    """Schemathesis sent 301 characters starting with a carriage return to a field of at most
    300: DRF trimmed it to 300 and saved it, though the schema calls it invalid."""
    api.force_authenticate(get_user_model().objects.create_user("long", password="x"))
    padded = api.post("/api/v1/me/searches/", {"query": "\r" + "x" * 300}, format="json")
    assert padded.status_code == 400, padded.content
    fits = api.post("/api/v1/me/searches/", {"query": "\r" + "x" * 299}, format="json")
    assert fits.status_code == 201, fits.content
