"""The conflict-of-interest check: co-authorship within N years and shared institutions, with the
papers, dates and each byline's match confidence; unresolved names said to be unresolved; the
page for signed-in readers and the API endpoint with its quota."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from institutions.clients.ror import parse_organization
from institutions.models import AuthorshipInstitution, Institution
from papers.models import Authorship
from researchers.conflicts import (
    ConflictInputError,
    conflict_check,
    conflict_check_request,
    resolve_names,
    resolve_paper_authors,
)
from researchers.models import ResearcherExternalId

pytestmark = pytest.mark.django_db

TODAY = date(2026, 12, 2)


@pytest.fixture
def ror_institution(fixtures_dir):
    records = {
        r["id"].rsplit("/", 1)[-1]: r
        for r in json.loads((fixtures_dir / "ror" / "records_v2_from_es_search.json").read_text())
    }

    def make(ror_id: str) -> Institution:
        record = parse_organization(records[ror_id])
        return Institution.objects.create(
            name=record.name, ror_id=record.ror_id, website=record.website
        )

    return make


@pytest.fixture
def coauthored(paper_factory):
    """A paper by the given records (in byline order), matched with the given confidences."""

    def make(records, *, published: datetime, confidences=None, institution=None):
        paper = paper_factory(authors=[r.display_name for r in records], published=published)
        for position, record in enumerate(records, start=1):
            confidence = (confidences or {}).get(record.pk, 0.9)
            Authorship.objects.filter(paper=paper, position=position).update(
                researcher=record, match_confidence=confidence, match_method="s2"
            )
            if institution is not None:
                AuthorshipInstitution.objects.create(
                    authorship=Authorship.objects.get(paper=paper, position=position),
                    institution=institution,
                    paper=paper,
                )
        return paper

    return make


def test_coauthorship_within_the_window_is_flagged_with_papers_dates_and_confidences(
    researcher_factory, coauthored
):
    ada, alan, grace = (
        researcher_factory("Ada Lovelace"),
        researcher_factory("Alan Turing"),
        researcher_factory("Grace Hopper"),
    )
    recent = coauthored(
        [ada, alan], published=datetime(2025, 3, 1, tzinfo=UTC), confidences={alan.pk: 0.62}
    )
    coauthored([ada, grace], published=datetime(2021, 1, 1, tzinfo=UTC))  # outside 3 years
    report = conflict_check(
        authors=resolve_names(["Ada Lovelace"]),
        reviewers=resolve_names(["Alan Turing", "Grace Hopper"]),
        today=TODAY,
    )
    assert report.since == date(2023, 12, 2)
    (flag,) = report.flags
    assert (flag.author_record, flag.reviewer_record) == (ada, alan)
    (shared,) = flag.papers
    assert shared.arxiv_id == recent.arxiv_id and shared.published == recent.published
    assert shared.author_byline.name == "Ada Lovelace" and shared.author_byline.confidence == 0.9
    assert shared.reviewer_byline.confidence == 0.62
    wider = conflict_check(
        authors=resolve_names(["Ada Lovelace"]),
        reviewers=resolve_names(["Alan Turing", "Grace Hopper"]),
        years=10,
        today=TODAY,
    )
    assert {f.reviewer_record.pk for f in wider.flags} == {alan.pk, grace.pk}


def test_coauthorship_before_the_window_is_counted_not_left_out_silently(
    researcher_factory, coauthored, client
):
    ada, grace, alan = (
        researcher_factory("Ada Lovelace"),
        researcher_factory("Grace Hopper"),
        researcher_factory("Alan Turing"),
    )
    coauthored([ada, grace], published=datetime(2019, 4, 1, tzinfo=UTC))
    coauthored([grace, ada], published=datetime(2021, 1, 1, tzinfo=UTC))
    coauthored([ada, alan], published=datetime(2025, 3, 1, tzinfo=UTC))
    report = conflict_check_request(
        author_lines=["Ada Lovelace"], reviewer_lines=["Grace Hopper", "Alan Turing"], today=TODAY
    )
    assert [f.reviewer_record for f in report.flags] == [alan]
    (earlier,) = report.earlier
    assert (earlier.author_record, earlier.reviewer_record) == (ada, grace)
    assert (earlier.papers, earlier.newest_year) == (2, 2021)
    api = _api_for("reader")
    client.force_login(get_user_model().objects.get(username="reader"))
    page = client.post(
        "/conflicts",
        {"authors": "Ada Lovelace", "reviewers": "Grace Hopper\nAlan Turing", "years": 3},
    ).content.decode()
    assert "Co-authors before the window" in page and "2 papers, the newest in 2021" in page
    data = api.post(
        "/api/v1/conflicts/",
        {"authors": ["Ada Lovelace"], "reviewers": ["Grace Hopper"], "years": 3},
        format="json",
    )
    assert data.status_code == 200, data.content
    assert [
        (e["author"]["id"], e["reviewer"]["id"], e["papers"], e["newest_year"])
        for e in data.json()["earlier"]
    ] == [(ada.pk, grace.pk, 2, 2021)]


def test_a_month_dated_shared_paper_says_its_precision(researcher_factory, coauthored, client):
    ada, alan = researcher_factory("Ada Lovelace"), researcher_factory("Alan Turing")
    paper = coauthored([ada, alan], published=datetime(2025, 3, 1, tzinfo=UTC))
    paper.published_precision = "month"
    paper.save(update_fields=["published_precision"])
    data = (
        _api_for("reader")
        .post(
            "/api/v1/conflicts/",
            {"authors": ["Ada Lovelace"], "reviewers": ["Alan Turing"], "years": 3},
            format="json",
        )
        .json()
    )
    (shared,) = data["flags"][0]["coauthored"]
    assert shared["published_precision"] == "month"
    client.force_login(get_user_model().objects.get(username="reader"))
    page = client.post(
        "/conflicts", {"authors": "Ada Lovelace", "reviewers": "Alan Turing", "years": 3}
    ).content.decode()
    assert "Mar 2025 <span" in page and "1 Mar 2025" not in page


def test_shared_institution_is_flagged_with_each_sides_newest_paper_there(
    researcher_factory, coauthored, ror_institution
):
    monash = ror_institution("02bfwt286")
    ada, alan = researcher_factory("Ada Lovelace"), researcher_factory("Alan Turing")
    first = coauthored([ada], published=datetime(2024, 5, 1, tzinfo=UTC), institution=monash)
    second = coauthored([alan], published=datetime(2025, 6, 1, tzinfo=UTC), institution=monash)
    report = conflict_check(
        authors=resolve_names(["Ada Lovelace"]),
        reviewers=resolve_names(["Alan Turing"]),
        today=TODAY,
    )
    (flag,) = report.flags
    assert flag.papers == []
    (inst,) = flag.institutions
    assert inst.institution == monash
    assert inst.author_evidence.arxiv_id == first.arxiv_id
    assert inst.reviewer_evidence.arxiv_id == second.arxiv_id
    assert inst.reviewer_evidence.published == second.published
    assert inst.reviewer_evidence.byline.confidence == 0.9


def test_names_resolve_by_orcid_page_and_name_and_the_rest_are_unresolved(
    researcher_factory, coauthored
):
    ada = researcher_factory("Ada Lovelace")
    alan = researcher_factory("Alan Turing")
    merged = researcher_factory("A. M. Turing", merged_into=alan)
    ResearcherExternalId.objects.create(
        researcher=alan, source=ResearcherExternalId.ORCID, value="0000-0002-1825-0097"
    )
    twin_a, twin_b = researcher_factory("Wei Zhang"), researcher_factory("Wei Zhang")
    coauthored([ada, twin_b], published=datetime(2025, 1, 1, tzinfo=UTC))
    resolved = resolve_names(
        [
            "https://orcid.org/0000-0002-1825-0097",
            f"https://wovepaper.example/researchers/{merged.pk}-a-m-turing",
            "Wei Zhang",
            "Nobody Byname",
            "0000-0001-5000-0007",
        ]
    )
    assert [r.status for r in resolved] == [
        "resolved",
        "resolved",
        "ambiguous",
        "unresolved",
        "unresolved",
    ]
    assert resolved[0].records == [alan] and resolved[1].records == [alan]
    assert set(resolved[2].records) == {twin_a, twin_b}
    report = conflict_check(
        authors=resolve_names(["Ada Lovelace"]), reviewers=resolved, today=TODAY
    )
    assert [u.given for u in report.unresolved] == ["Nobody Byname", "0000-0001-5000-0007"]
    assert [f.reviewer_record for f in report.flags] == [twin_b]
    assert report.flags[0].reviewer.status == "ambiguous"


def test_a_papers_bylines_are_the_authors_and_an_unmatched_byline_is_unresolved(
    researcher_factory, paper_factory
):
    ada = researcher_factory("Ada Lovelace")
    paper = paper_factory(authors=["Ada Lovelace", "Someone Unmatched"])
    Authorship.objects.filter(paper=paper, position=1).update(
        researcher=ada, match_confidence=0.75, match_method="openalex"
    )
    found, authors = resolve_paper_authors(paper.arxiv_id)
    assert found == paper
    assert [(a.given, a.status, a.confidence) for a in authors] == [
        ("Ada Lovelace", "resolved", 0.75),
        ("Someone Unmatched", "unresolved", None),
    ]
    report = conflict_check_request(
        arxiv_id=paper.arxiv_id, reviewer_lines=["Ada Lovelace"], today=TODAY
    )
    (flag,) = report.flags
    assert flag.same_record and flag.author_record == ada


def test_every_coauthorship_flag_is_checkable_against_the_bylines(researcher_factory, coauthored):
    people = [researcher_factory(f"Person Number{i}") for i in range(12)]
    for i in range(30):
        group = [people[(i * 7 + k * 5) % 12] for k in range(3)]
        if len(set(group)) == 3:
            coauthored(group, published=datetime(2024 + i % 2, 1 + i % 12, 1, tzinfo=UTC))
    report = conflict_check(
        authors=resolve_names([p.display_name for p in people[:4]]),
        reviewers=resolve_names([p.display_name for p in people[4:]]),
        today=TODAY,
    )
    assert report.flags
    for flag in report.flags:
        for shared in flag.papers:
            on_paper = set(
                Authorship.objects.filter(paper__arxiv_id=shared.arxiv_id).values_list(
                    "researcher_id", flat=True
                )
            )
            assert {flag.author_record.pk, flag.reviewer_record.pk} <= on_paper
    # And nothing is missed: every pair on a paper in the window is flagged.
    expected = {
        (a, r)
        for paper_researchers in (
            set(p.authorships.values_list("researcher_id", flat=True))
            for p in {
                auth.paper
                for auth in Authorship.objects.filter(
                    researcher__in=people[:4],
                    paper__published__gte=datetime(2023, 12, 2, tzinfo=UTC),
                ).select_related("paper")
            }
        )
        for a in paper_researchers & {p.pk for p in people[:4]}
        for r in paper_researchers & {p.pk for p in people[4:]}
    }
    assert {
        (f.author_record.pk, f.reviewer_record.pk) for f in report.flags if f.papers
    } == expected


def test_check_queries_do_not_grow_with_reviewers_or_papers(
    researcher_factory, coauthored, django_assert_max_num_queries
):
    authors = [researcher_factory(f"Author Number{i}") for i in range(5)]
    reviewers = [researcher_factory(f"Reviewer Number{i}") for i in range(40)]
    for i, reviewer in enumerate(reviewers):
        coauthored([authors[i % 5], reviewer], published=datetime(2025, 1, 1, tzinfo=UTC))
    author_lines = [a.display_name for a in authors]
    reviewer_lines = [r.display_name for r in reviewers]
    with django_assert_max_num_queries(12):
        report = conflict_check_request(
            author_lines=author_lines, reviewer_lines=reviewer_lines, today=TODAY
        )
    assert len(report.flags) == 40


def test_the_page_is_for_signed_in_readers_and_has_a_quota(
    client, researcher_factory, coauthored, settings
):
    ada, alan = researcher_factory("Ada Lovelace"), researcher_factory("Alan Turing")
    paper = coauthored([ada, alan], published=datetime(2025, 6, 1, tzinfo=UTC))
    assert client.get("/conflicts").status_code == 302
    user = get_user_model().objects.create_user("chair", "chair@example.org", "pw-12345678")
    client.force_login(user)
    assert client.get("/conflicts").status_code == 200
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "conflicts": "2/day"}
    form = {
        "paper": "",
        "authors": "Ada Lovelace",
        "reviewers": "Alan Turing\nNobody Byname",
        "years": 3,
    }
    html = client.post("/conflicts", form).content.decode()
    assert "1 flag" in html and paper.arxiv_id in html and "match confidence 0.90" in html
    assert "Unresolved names" in html and "Nobody Byname" in html
    md = client.post("/conflicts", form, HTTP_ACCEPT="text/markdown")
    assert md["Content-Type"].startswith("text/markdown")
    assert f"Co-authors: {paper.title} ({paper.arxiv_id}" in md.content.decode()
    assert client.post("/conflicts", form).status_code == 429


def test_the_api_checks_with_a_token_and_has_a_quota(researcher_factory, coauthored, settings):
    ada, alan = researcher_factory("Ada Lovelace"), researcher_factory("Alan Turing")
    paper = coauthored([ada, alan], published=datetime(2025, 6, 1, tzinfo=UTC))
    api = APIClient()
    body = {"paper": paper.arxiv_id, "reviewers": ["Alan Turing", "Nobody Byname"]}
    assert api.post("/api/v1/conflicts/", body, format="json").status_code in (401, 403)
    user = get_user_model().objects.create_user("chair", "chair@example.org", "pw-12345678")
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "conflicts": "2/day"}
    response = api.post("/api/v1/conflicts/", body, format="json")
    assert response.status_code == 200
    data = response.json()
    assert data["paper"]["arxiv_id"] == paper.arxiv_id and data["unresolved"] == ["Nobody Byname"]
    flags = [f for f in data["flags"] if not f["same_record"]]
    (flag,) = flags
    assert flag["author"]["record"]["id"] == ada.pk and flag["reviewer"]["record"]["id"] == alan.pk
    assert flag["coauthored"][0]["reviewer_byline"] == {
        "name": "Alan Turing",
        "confidence": 0.9,
        "method": "s2",
    }
    assert (
        api.post("/api/v1/conflicts/", {**body, "paper": "9999.99999"}, format="json").status_code
        == 404
    )
    assert api.post("/api/v1/conflicts/", body, format="json").status_code == 429


def test_the_endpoint_is_in_the_openapi_schema(client):
    schema = json.loads(client.get("/openapi.json").content)
    operation = schema["paths"]["/api/v1/conflicts/"]["post"]
    assert operation["operationId"] == "conflicts_check"
    assert {"200", "400", "413", "429"} <= set(operation["responses"])


def _api_for(username: str) -> APIClient:
    user = get_user_model().objects.create_user(username, f"{username}@example.org", "pw-1234567")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return api


def test_a_name_given_a_thousand_times_is_checked_once(researcher_factory, coauthored):
    ilya, other = researcher_factory("Ilya Sutskever"), researcher_factory("Oriol Vinyals")
    coauthored([ilya, other], published=datetime(2025, 6, 1, tzinfo=UTC))
    body = {"authors": ["Ilya Sutskever"] * 100, "reviewers": ["Ilya  Sutskever"] * 1000}
    response = _api_for("chair").post("/api/v1/conflicts/", {**body, "years": 30}, format="json")
    assert response.status_code == 200
    data = response.json()
    assert [a["given"] for a in data["authors"]] == ["Ilya Sutskever"]
    assert [r["given"] for r in data["reviewers"]] == ["Ilya Sutskever"]
    assert [f["same_record"] for f in data["flags"]] == [True]
    # Was 100 × 1000 flags, 70 MB.
    assert len(response.content) < 5_000


def test_repeats_fold_by_name_key_orcid_and_page(researcher_factory):
    ada = researcher_factory("Ada Lovelace")
    ResearcherExternalId.objects.create(
        researcher=ada, source=ResearcherExternalId.ORCID, value="0000-0002-1825-0097"
    )
    lines = [
        "Ada Lovelace",
        "Lovelace, Ada",
        "0000-0002-1825-0097",
        "https://orcid.org/0000-0002-1825-0097",
        f"/researchers/{ada.pk}",
        str(ada.pk),
        "Alan Turing",
    ]
    resolved = resolve_names(lines)
    assert [(r.given, r.how) for r in resolved] == [
        ("Ada Lovelace", "name"),
        ("0000-0002-1825-0097", "orcid"),
        (f"/researchers/{ada.pk}", "page"),
        ("Alan Turing", "name"),
    ]


def test_too_many_lines_are_refused_before_any_lookup(django_assert_num_queries):
    reviewers = [f"Reviewer Number{i}" for i in range(1001)]
    with django_assert_num_queries(0), pytest.raises(ConflictInputError, match="1000 reviewers"):
        conflict_check_request(author_lines=["Ada Lovelace"], reviewer_lines=reviewers)


def test_the_page_refuses_too_many_lines_without_charging_the_quota(client, settings):
    user = get_user_model().objects.create_user("chair", "chair@example.org", "pw-12345678")
    client.force_login(user)
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "conflicts": "1/day"}
    lines = "\n".join(f"Reviewer Number{i}" for i in range(20_000))
    form = {"paper": "", "authors": "Ada Lovelace", "reviewers": lines, "years": 3}
    response = client.post("/conflicts", form)
    assert response.status_code == 400
    assert "At most 100 authors and 1000 reviewers" in response.content.decode()
    small = {**form, "reviewers": "Alan Turing"}
    assert client.post("/conflicts", small).status_code == 200
    refused = client.post("/conflicts", small)
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 86_400


def test_a_check_past_the_pair_budget_is_refused_before_its_work(
    researcher_factory, coauthored, monkeypatch
):
    from researchers import conflicts

    monkeypatch.setattr(conflicts, "MAX_PAIRS", 5)
    for _ in range(3):
        researcher_factory("Common Name")  # one name, three records
    reviewers = [researcher_factory(f"Reviewer Number{i}") for i in range(2)]
    body = {"authors": ["Common Name"], "reviewers": [r.display_name for r in reviewers]}
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        response = _api_for("chair").post("/api/v1/conflicts/", body, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "over_budget"
    assert "3 author records and 2 reviewer records: 6 pairs" in error["message"]
    # Refused from the records in hand: no byline was counted or read.
    assert not [q for q in queries.captured_queries if "papers_authorship" in q["sql"]]
    body["reviewers"] = body["reviewers"][:1]
    assert _api_for("other").post("/api/v1/conflicts/", body, format="json").status_code == 200


def test_a_check_past_the_byline_budget_is_refused(researcher_factory, coauthored, monkeypatch):
    from researchers import conflicts

    monkeypatch.setattr(conflicts, "MAX_BYLINES", 3)
    ada, alan = researcher_factory("Ada Lovelace"), researcher_factory("Alan Turing")
    for year in (2025, 2026):
        coauthored([ada, alan], published=datetime(year, 6, 1, tzinfo=UTC))
    with pytest.raises(conflicts.OverBudget, match="4 bylines in the window"):
        conflict_check_request(
            author_lines=["Ada Lovelace"], reviewer_lines=["Alan Turing"], today=TODAY
        )
    report = conflict_check_request(
        author_lines=["Ada Lovelace"], reviewer_lines=["Alan Turing"], years=1, today=TODAY
    )
    assert len(report.flags) == 1


def test_a_body_past_the_upload_limit_gets_the_apis_error(settings):
    body = json.dumps({"reviewers": ["x" * 1000] * 3000})
    assert len(body) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    response = _api_for("chair").post("/api/v1/conflicts/", body, content_type="application/json")
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"


def test_a_full_name_finds_the_record_its_bylines_wrote_with_initials_and_they_are_flagged(
    researcher_factory, coauthored
):
    """The issue's case: "Ian Sommerville" named no record (the demo holds I. Sommerville), and
    the two's seven papers together were not flagged."""
    sommerville = researcher_factory("I. Sommerville")
    khajeh = researcher_factory("Ali Khajeh-Hosseini")
    for year in (2010, 2011, 2012):
        coauthored([khajeh, sommerville], published=datetime(year, 3, 1, tzinfo=UTC))
    (resolved,) = resolve_names(["Ian Sommerville"])
    assert resolved.records == [sommerville]
    assert resolved.note.startswith("no record has the name as given; taken as I. Sommerville")
    # The name as given wins where a record has it.
    ian = researcher_factory("Ian Sommerville")
    assert resolve_names(["Ian Sommerville"])[0].records == [ian]
    report = conflict_check(
        authors=resolve_names(["I. Sommerville"]),
        reviewers=resolve_names([f"/researchers/{khajeh.pk}"]),
        today=TODAY,
        years=30,
    )
    assert [len(f.papers) for f in report.flags] == [3]


def test_researcher_and_paper_pages_lead_to_the_check_with_the_form_filled(
    researcher_factory, coauthored, client
):
    ada, alan = researcher_factory("Ada Lovelace"), researcher_factory("Alan Turing")
    paper = coauthored([ada, alan], published=datetime(2025, 3, 1, tzinfo=UTC))
    researcher_page = client.get(alan.get_absolute_url()).content.decode()
    link = f"/conflicts?reviewers={alan.get_absolute_url()}".replace("/", "%2F").replace(
        "%2Fconflicts?", "/conflicts?"
    )
    assert f'href="{link}"' in researcher_page
    paper_page = client.get(paper.get_absolute_url()).content.decode()
    assert f'href="/conflicts?paper={paper.arxiv_id}"' in paper_page
    _api_for("reader")
    client.force_login(get_user_model().objects.get(username="reader"))
    form = client.get(link).content.decode()
    assert f"\n{alan.get_absolute_url()}</textarea>" in form
    form = client.get(f"/conflicts?paper={paper.arxiv_id}").content.decode()
    assert f'value="{paper.arxiv_id}"' in form
    assert "flag" not in form.split("</form>")[1]  # filled, not checked: nothing charged
