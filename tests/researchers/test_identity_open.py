"""Identity in the open: the sources side by side, same-name evidence, public history, readers'
reports, ORCID-confirmed claims and the bulk file of identity links."""

from __future__ import annotations

import gzip
import json
from datetime import timedelta

import pytest
from allauth.socialaccount.models import SocialAccount
from django.core.management import call_command
from django.utils import timezone

from accounts.models import Claim
from accounts.ownership.claims import orcid_merge_proposals, researcher_claim
from researchers.curation.decisions import (
    authorship_move,
    researchers_mark_distinct,
    researchers_merge,
)
from researchers.curation.reports import ReportError, match_report_create
from researchers.identity_links import FILE_NAME, META_NAME, identity_links_export
from researchers.models import (
    DistinctPair,
    IdentityConflict,
    MatchReport,
    Researcher,
    ResearcherExternalId,
)
from researchers.source_figures import researchers_refresh_figures


@pytest.fixture
def homonyms(researcher_factory, paper_factory, link_author):
    """Two "Marcus Liwicki" records who share a co-author and a field, and a third person."""
    a = researcher_factory("Marcus Liwicki", field_counts={"cs.CV": 3})
    b = researcher_factory("Marcus Liwicki", field_counts={"cs.CV": 1, "cs.LG": 2})
    co = researcher_factory("Andreas Dengel")
    a.coauthors = [{"id": co.pk, "name": co.display_name, "slug": co.slug, "count": 2}]
    b.coauthors = [{"id": co.pk, "name": co.display_name, "slug": co.slug, "count": 1}]
    a.save()
    b.save()
    paper_a = paper_factory(authors=["Marcus Liwicki", "Andreas Dengel"])
    paper_b = paper_factory(authors=["Marcus Liwicki"])
    link_author(paper_a, 1, a)
    link_author(paper_b, 1, b)
    return a, b, co, paper_a


@pytest.mark.django_db
def test_figures_refresh_keeps_each_sources_record_and_the_page_flags_disagreement(
    sources, clean_cache, client
):
    # One record holding the ids of two recorded authors whom the sources describe very
    # differently: exactly what the panel must show side by side and flag.
    record = Researcher.objects.create(display_name="Jonathan C. Roberts")
    ResearcherExternalId.objects.create(researcher=record, source="s2", value="1711844")
    ResearcherExternalId.objects.create(researcher=record, source="openalex", value="A5009341822")
    assert researchers_refresh_figures([record.pk]) == 1
    s2 = ResearcherExternalId.objects.get(researcher=record, source="s2")
    oa = ResearcherExternalId.objects.get(researcher=record, source="openalex")
    assert (s2.name, s2.citation_count, s2.h_index) == ("I. Sommerville", 14416, 57)
    assert (oa.name, oa.citation_count, oa.h_index) == ("Jonathan C. Roberts", 3109, 23)
    assert s2.fetched_at and oa.fetched_at
    record.refresh_from_db()
    assert record.figures_source == "s2" and record.citation_count == 14416

    html = client.get(record.get_absolute_url()).content.decode()
    assert "“I. Sommerville”" in html and "“Jonathan C. Roberts”" in html
    assert "OpenAlex counts 3,109 citations, Semantic Scholar 14,416" in html
    assert "The sources spell the name differently" in html


@pytest.mark.django_db
def test_same_name_records_show_evidence_and_verdict(client, homonyms, curator):
    a, b, co, _ = homonyms
    html = client.get(a.get_absolute_url()).content.decode()
    assert "Undecided · why?" in html
    assert "shared co-authors: Andreas Dengel" in html
    assert "overlapping fields: cs.CV" in html
    researchers_mark_distinct(first_id=a.pk, second_id=b.pk, actor=curator)
    html = client.get(a.get_absolute_url()).content.decode()
    assert "Curated: a different person" in html
    md = client.get(a.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert "Verdict: curated as a different person." in md
    assert "Like the same person: shared co-authors: Andreas Dengel" in md


@pytest.mark.django_db
def test_public_history_says_what_and_when_never_who(client, homonyms, curator):
    a, b, _, _ = homonyms
    researchers_merge(survivor_id=b.pk, folded_ids=[a.pk], actor=curator, note="same ORCID")
    old = client.get(a.get_absolute_url())
    assert old.status_code == 301 and old["Location"] == b.get_absolute_url()
    page = client.get(b.get_absolute_url()).content.decode()
    assert "1 record folded into one, with 1 paper" in page
    assert f"#{a.pk}" in page
    for secret in ("curator", "same ORCID"):
        assert secret not in page.replace("curators", "").replace("Curators", "")
    data = client.get(f"/api/v1/researchers/{b.pk}/identity/").json()
    assert data["history"][0]["action"] == "merge"
    assert {r["id"] for r in data["history"][0]["records"]} == {a.pk, b.pk}
    assert "curator" not in json.dumps(data)
    assert client.get(f"/api/v1/researchers/{a.pk}/identity/").status_code == 301


@pytest.mark.django_db
def test_identity_api_lists_sources_and_open_conflicts(client, homonyms):
    a, b, _, paper = homonyms
    ResearcherExternalId.objects.create(researcher=a, source="s2", value="2003")
    IdentityConflict.objects.create(
        kind=IdentityConflict.S2_SPLIT,
        researcher=a,
        other_researcher=b,
        s2_id="2003",
        openalex_id="A1",
        paper=paper,
    )
    data = client.get(f"/api/v1/researchers/{a.pk}/identity/").json()
    assert [s["value"] for s in data["sources"]] == ["2003"]
    assert data["sources"][0]["origin"] == "matched on a paper's byline"
    assert data["sources"][0]["fetched_at"] is None
    conflict = [d for d in data["disagreements"] if d["kind"] == "conflict"][0]
    assert conflict["other"]["id"] == b.pk and conflict["paper"] == paper.arxiv_id
    same = data["same_name"][0]
    assert same["record"]["id"] == b.pk and same["verdict"] == "undecided"
    assert any("identity conflict" in line for line in same["evidence_for"])


@pytest.mark.django_db
def test_anonymous_readers_cannot_report(client, homonyms):
    a, b, _, _ = homonyms
    response = client.post(
        "/researchers/report",
        {"kind": "same_person", "researcher": a.pk, "other": str(b.pk)},
    )
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not MatchReport.objects.exists()
    # The link is on the page every reader shares; the report form asks them to sign in.
    assert (
        f"/researchers/report?researcher={a.pk}"
        in client.get(a.get_absolute_url()).content.decode()
    )


@pytest.mark.django_db
def test_a_report_storm_from_one_user_is_throttled(client, homonyms, reader_factory, settings):
    settings.MATCH_REPORTS_PER_HOUR = 3
    a, b, co, _ = homonyms
    reader = reader_factory()
    client.force_login(reader)
    for kind, other in (("same_person", b), ("different_people", b), ("same_person", co)):
        response = client.post(
            "/researchers/report",
            {"kind": kind, "researcher": a.pk, "other": other.get_absolute_url(), "note": "x"},
        )
        assert response.status_code == 302
    response = client.post(
        "/researchers/report", {"kind": "different_people", "researcher": a.pk, "other": co.pk}
    )
    assert response.status_code == 429
    assert "the most we take from one account" in response.content.decode()
    assert MatchReport.objects.filter(reporter=reader).count() == 3
    # An hour later the reader may report again.
    MatchReport.objects.update(created_at=timezone.now() - timedelta(hours=2))
    with pytest.raises(ReportError):
        match_report_create(user=reader, kind="same_person", researcher_id=a.pk)
    match_report_create(
        user=reader, kind="different_people", researcher_id=a.pk, other_researcher_id=co.pk
    )


@pytest.mark.django_db
def test_curators_decisions_close_reports_and_the_reporter_sees_the_outcome(
    client, homonyms, reader_factory, curator
):
    a, b, co, paper = homonyms
    reader = reader_factory()
    same = match_report_create(
        user=reader, kind="same_person", researcher_id=a.pk, other_researcher_id=b.pk
    )
    authorship = paper.authorships.get(researcher=a)
    client.force_login(reader)
    response = client.post(
        "/researchers/report", {"kind": "not_by", "paper": paper.pk, "authorship": authorship.pk}
    )
    assert response.status_code == 302
    not_by = MatchReport.objects.get(kind="not_by")
    assert not_by.researcher_id == a.pk and not_by.authorship_id == authorship.pk
    declined = match_report_create(
        user=reader, kind="different_people", researcher_id=a.pk, other_researcher_id=co.pk
    )
    # Filing the same open report again changes nothing.
    assert (
        match_report_create(
            user=reader, kind="same_person", researcher_id=a.pk, other_researcher_id=b.pk
        ).pk
        == same.pk
    )

    client.force_login(curator)
    queue = client.get("/admin/researchers/researcher/curation/").content.decode()
    assert "Readers' reports" in queue and "3 open" in queue
    authorship_move(authorship_id=authorship.pk, to_researcher_id=co.pk, actor=curator)
    researchers_merge(survivor_id=b.pk, folded_ids=[a.pk], actor=curator)
    response = client.post(
        f"/admin/researchers/researcher/curation/reports/{declined.pk}/decline/",
        {"reason": "Their co-authors and fields show two people."},
    )
    assert response.status_code == 302
    statuses = dict(MatchReport.objects.values_list("pk", "status"))
    assert statuses == {same.pk: "acted", not_by.pk: "acted", declined.pk: "declined"}

    client.force_login(reader)
    account = client.get("/accounts/").content.decode()
    assert "A curator merged these records." in account
    assert "A curator moved this paper to another record." in account
    assert "Their co-authors and fields show two people." in account
    exported = client.get("/accounts/export/").json()
    assert {r["status"] for r in exported["reports"]} == {"acted", "declined"}


@pytest.mark.django_db
def test_orcid_sign_in_confirms_a_claim_at_once_and_proposes_merges(homonyms, reader_factory):
    a, b, _, _ = homonyms
    ResearcherExternalId.objects.create(
        researcher=a, source="orcid", value="https://orcid.org/0000-0001-8366-0191"
    )
    IdentityConflict.objects.create(
        kind=IdentityConflict.ORCID, researcher=b, other_researcher=a, orcid="0000-0001-8366-0191"
    )
    stranger, owner = reader_factory(), reader_factory()
    SocialAccount.objects.create(user=stranger, provider="orcid", uid="0000-0002-1825-0097")
    SocialAccount.objects.create(user=owner, provider="orcid", uid="0000-0001-8366-0191")
    assert researcher_claim(user=stranger, researcher=a).status == Claim.Status.PENDING
    claim = researcher_claim(user=owner, researcher=a)
    assert claim.status == Claim.Status.CONFIRMED and claim.reviewed_by is None
    assert ResearcherExternalId.objects.get(researcher=a, source="orcid").origin == "claim"
    assert orcid_merge_proposals(researcher=a) == [b]


@pytest.mark.django_db
def test_identity_links_file_parses_and_matches_the_database(
    client, homonyms, curator, tmp_path, settings
):
    settings.DATA_DIR = tmp_path
    a, b, _, _ = homonyms
    ResearcherExternalId.objects.create(researcher=b, source="openalex", value="A5009341822")
    researchers_merge(survivor_id=b.pk, folded_ids=[a.pk], actor=curator)
    assert client.get(f"/data/{FILE_NAME}").status_code == 404
    out = tmp_path / "out.txt"
    with out.open("w") as stream:
        call_command("export_identity_links", stdout=stream)
    assert "researcher records" in out.read_text()
    response = client.get(f"/data/{FILE_NAME}")
    assert response.status_code == 200
    rows = [
        json.loads(line)
        for line in gzip.decompress(b"".join(response.streaming_content)).splitlines()
    ]
    assert [r["id"] for r in rows] == list(
        Researcher.objects.order_by("pk").values_list("pk", flat=True)
    )
    by_id = {r["id"]: r for r in rows}
    assert by_id[a.pk]["merged_into"] == b.pk
    assert by_id[b.pk]["ids"] == [
        {
            "source": "openalex",
            "value": "A5009341822",
            "origin": "matching",
            "linked_at": by_id[b.pk]["ids"][0]["linked_at"],
        }
    ]
    meta = json.loads(b"".join(client.get(f"/data/{META_NAME}").streaming_content))
    assert meta["records"] == len(rows) and "ODC-BY" in json.dumps(meta["licence"])
    assert identity_links_export(tmp_path / "exports")["records"] == len(rows)
    assert "/data/identity-links.jsonl.gz" in client.get("/llms.txt").content.decode()
    assert DistinctPair.objects.count() == 0
