"""Claims ("this is me"): confirmed at once by an ORCID tie, else waiting for the curators with
the evidence; one person, one verified record; the curators' decision shown to the claimant.

The ORCID record is the real public v3.0 record of ORCID's demonstration researcher, as allauth
stores it at sign-in (tests/fixtures/orcid/, provenance in tests/fixtures/README.md); the
institution is a recorded ROR organisation.
"""

from __future__ import annotations

import gzip
import json

import pytest
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth import get_user_model

from accounts.models import Claim
from accounts.ownership.claim_evidence import orcid_record_works, website_host
from accounts.ownership.claims import ClaimRefused, researcher_claim
from accounts.ownership.reviews import ClaimError, claim_review
from institutions.clients.ror import parse_organization
from institutions.models import AuthorshipInstitution, Institution
from papers.models import Authorship
from researchers.identity_links import FILE_NAME, identity_links_export
from researchers.models import CurationEntry, Researcher, ResearcherExternalId

pytestmark = pytest.mark.django_db

ORCID_ID = "0000-0002-1825-0097"


@pytest.fixture
def orcid_record(fixtures_dir) -> dict:
    return json.loads((fixtures_dir / "orcid" / f"record_{ORCID_ID}.json").read_text())


@pytest.fixture
def orcid_user(user_factory, orcid_record):
    """A reader who signed in with ORCID: allauth keeps the public record as extra_data."""

    def make(**kwargs):
        user = user_factory(**kwargs)
        SocialAccount.objects.create(
            user=user, provider="orcid", uid=ORCID_ID, extra_data=orcid_record
        )
        return user

    return make


@pytest.fixture
def monash(fixtures_dir) -> Institution:
    records = json.loads((fixtures_dir / "ror" / "records_v2_from_es_search.json").read_text())
    record = parse_organization(next(r for r in records if r["id"].endswith("02bfwt286")))
    return Institution.objects.create(
        name=record.name, ror_id=record.ror_id, website=record.website
    )


def _orcid_link(researcher: Researcher, value: str = ORCID_ID) -> ResearcherExternalId:
    return ResearcherExternalId.objects.create(
        researcher=researcher, source=ResearcherExternalId.ORCID, value=value
    )


def test_orcid_record_works_reads_the_works_own_dois(orcid_record):
    works = orcid_record_works(orcid_record)
    assert [w.value for w in works] == [
        "10.5555/12345680",
        "10.5555/666655554444",
        "10.5555/987654321",
        "10.5555/12345679",
        "10.5555/12345678",
        "10.1109/tps.1987.4316723",
    ]
    assert {w.kind for w in works} == {"doi"}  # the Scopus "eid" is not a DOI or arXiv id
    assert works[4].title.startswith("Toward a Unified Theory of High-Energy Metaphysics")


def test_website_host_drops_scheme_www_and_path():
    assert website_host("http://www.monash.edu/") == "monash.edu"
    assert website_host("https://www.uow.edu.au/index.html") == "uow.edu.au"
    assert website_host("") == ""


def test_orcid_tie_confirms_at_once_and_the_page_says_verified_by_orcid(
    client, orcid_user, researcher_factory
):
    researcher = researcher_factory("Josiah Carberry")
    _orcid_link(researcher)
    claim = researcher_claim(user=orcid_user(), researcher=researcher)
    assert claim.status == Claim.Status.CONFIRMED and claim.method == "orcid"
    assert claim.reviewed_by is None
    researcher.refresh_from_db()
    assert researcher.verified_by == "orcid" and researcher.verified_at == claim.reviewed_at
    assert researcher.external_ids.get().origin == ResearcherExternalId.CLAIM

    page = client.get(researcher.get_absolute_url()).content.decode()
    assert "Verified by ORCID" in page
    assert f"on {researcher.verified_at:%-d %b %Y}" in page
    assert "verified by ORCID as their own page" in page  # the public history
    md = client.get(researcher.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert f"Verified by ORCID on {researcher.verified_at:%Y-%m-%d}" in md


def test_claim_without_tie_waits_with_the_orcid_works_that_are_papers_here(
    client, orcid_user, researcher_factory, authored_paper
):
    researcher = researcher_factory("Josiah Carberry")
    match = authored_paper(researcher, doi="10.5555/12345678")
    authored_paper(researcher, doi="10.1000/not-in-the-orcid-record")
    # The recorded ORCID record lists 10.5555/12345679 too, but on someone else's page here.
    other = researcher_factory("Someone Else Entirely")
    authored_paper(other, doi="10.5555/12345679")
    user = orcid_user()
    claim = researcher_claim(user=user, researcher=researcher, message="My papers")
    assert claim.status == Claim.Status.PENDING
    assert claim.evidence["orcid_tie"] is False
    assert [w["arxiv_id"] for w in claim.evidence["orcid_works"]] == [match.arxiv_id]
    assert claim.evidence["orcid_works"][0]["by"] == "DOI"
    researcher.refresh_from_db()
    assert researcher.verified_by == ""
    assert "Verified by" not in client.get(researcher.get_absolute_url()).content.decode()


def test_claim_evidence_names_an_email_domain_at_the_records_institution(
    user_factory, researcher_factory, authored_paper, monash
):
    researcher = researcher_factory("Ada Lovelace")
    paper = authored_paper(researcher)
    authorship = Authorship.objects.get(paper=paper, researcher=researcher)
    AuthorshipInstitution.objects.create(authorship=authorship, institution=monash, paper=paper)
    user = user_factory(email="ada@med.monash.edu")
    EmailAddress.objects.create(user=user, email="ada@unverified.example.org", verified=False)
    claim = researcher_claim(user=user, researcher=researcher)
    assert claim.status == Claim.Status.PENDING
    assert [(d["domain"], d["name"]) for d in claim.evidence["email_domains"]] == [
        ("med.monash.edu", "Monash University")
    ]
    stranger = researcher_claim(
        user=user_factory(email="x@monash.edu.evil.example"), researcher=researcher
    )
    assert stranger.evidence["email_domains"] == []


def test_second_claim_on_a_verified_record_waits_with_both_sides(
    client, orcid_user, user_factory, researcher_factory
):
    researcher = researcher_factory("Josiah Carberry")
    _orcid_link(researcher)
    owner_claim = researcher_claim(user=orcid_user(), researcher=researcher)
    rival = user_factory()
    rival_claim = researcher_claim(user=rival, researcher=researcher)
    assert rival_claim.status == Claim.Status.PENDING
    (conflict,) = rival_claim.evidence["conflicts"]
    assert conflict["kind"] == "record_owned" and conflict["claim"] == owner_claim.pk
    with pytest.raises(ClaimError, match="already verified"):
        claim_review(claim=rival_claim, reviewer=None, confirm=True)
    assert Claim.objects.get(pk=rival_claim.pk).status == Claim.Status.PENDING

    curator = get_user_model().objects.create_superuser("curator", "c@example.org", "pw-12345678")
    client.force_login(curator)
    page = client.get(f"/admin/accounts/claim/{rival_claim.pk}/change/").content.decode()
    assert f"claim #{rival_claim.pk}" in page and f"claim #{owner_claim.pk}" in page
    assert "The other side" in page
    response = client.post(
        f"/admin/accounts/claim/{rival_claim.pk}/change/",
        {"decision": "confirm", "decision_note": "looks right"},
    )
    assert response.status_code == 200 and "already verified" in response.content.decode()
    assert Claim.objects.get(pk=rival_claim.pk).status == Claim.Status.PENDING


def test_a_claimant_who_owns_a_record_goes_to_the_curators_even_with_an_orcid_tie(
    orcid_user, researcher_factory
):
    user = orcid_user()
    first = researcher_factory("Josiah Carberry")
    claim_review(claim=researcher_claim(user=user, researcher=first), reviewer=None, confirm=True)
    second = researcher_factory("J. Carberry")
    _orcid_link(second)
    claim = researcher_claim(user=user, researcher=second)
    assert claim.status == Claim.Status.PENDING
    assert claim.evidence["orcid_tie"] is True
    assert [c["researcher"] for c in claim.evidence["conflicts"]] == [first.pk]
    second.refresh_from_db()
    assert second.verified_by == ""
    with pytest.raises(ClaimError, match="one person, one verified record"):
        claim_review(claim=claim, reviewer=None, confirm=True)


def test_curators_decision_and_note_are_shown_to_the_claimant(
    client, user_factory, researcher_factory
):
    user = user_factory()
    researcher = researcher_factory("Ada Lovelace")
    claim = researcher_claim(user=user, researcher=researcher)
    curator = get_user_model().objects.create_superuser("curator", "c@example.org", "pw-12345678")
    client.force_login(curator)
    client.post(
        f"/admin/accounts/claim/{claim.pk}/change/",
        {"decision": "reject", "decision_note": "None of these papers are in your ORCID record."},
    )
    claim.refresh_from_db()
    assert claim.status == Claim.Status.REJECTED and claim.reviewed_by == curator
    client.force_login(user)
    page = client.get("/accounts/").content.decode()
    assert "rejected" in page and "None of these papers are in your ORCID record." in page
    parts = client.get("/me/state").json()["parts"]
    (shown,) = [p for p in parts if f'id="claim-{researcher.pk}"' in p]
    assert "None of these papers are in your ORCID record." in shown


def test_curators_confirm_then_withdraw_a_verification_in_the_public_history(
    client, user_factory, researcher_factory, settings, tmp_path
):
    researcher = researcher_factory("Ada Lovelace")
    claim = researcher_claim(user=user_factory(), researcher=researcher)
    claim_review(claim=claim, reviewer=None, confirm=True, note="Checked with her institution.")
    researcher.refresh_from_db()
    assert researcher.verified_by == "curators"
    page = client.get(researcher.get_absolute_url()).content.decode()
    assert "Verified by the curators" in page
    assert "Checked with her institution." not in page  # the note is the claimant's to read

    identity_links_export(tmp_path)
    with gzip.open(tmp_path / FILE_NAME, "rt") as rows:
        row = next(json.loads(line) for line in rows if json.loads(line)["id"] == researcher.pk)
    assert row["verified"]["by"] == "curators"

    claim_review(claim=claim, reviewer=None, confirm=False, note="The claimant asked us to.")
    researcher.refresh_from_db()
    assert researcher.verified_by == "" and researcher.verified_at is None
    page = client.get(researcher.get_absolute_url()).content.decode()
    assert "Verified by" not in page
    assert "withdrawn by the curators" in page
    assert CurationEntry.objects.filter(action=CurationEntry.VERIFIED).count() == 2


def test_confirming_twice_writes_one_history_entry(user_factory, researcher_factory):
    researcher = researcher_factory("Ada Lovelace")
    claim = researcher_claim(user=user_factory(), researcher=researcher)
    claim_review(claim=claim, reviewer=None, confirm=True)
    claim_review(claim=claim, reviewer=None, confirm=True)
    assert CurationEntry.objects.filter(action=CurationEntry.VERIFIED).count() == 1


def test_a_verified_record_merged_into_another_keeps_its_owner_and_a_split_gives_it_back(
    client, user_factory, researcher_factory
):
    from researchers.curation.decisions import merge_split, researchers_merge

    owned = researcher_factory("Ada Lovelace")
    survivor = researcher_factory("Ada Lovelace")
    claim_review(
        claim=researcher_claim(user=user_factory(), researcher=owned), reviewer=None, confirm=True
    )
    entry = researchers_merge(survivor_id=survivor.pk, folded_ids=[owned.pk], actor=None)
    survivor.refresh_from_db()
    assert survivor.verified_by == "curators"
    assert "Verified by the curators" in client.get(survivor.get_absolute_url()).content.decode()

    merge_split(entry_id=entry.pk, actor=None)
    survivor.refresh_from_db()
    owned.refresh_from_db()
    assert survivor.verified_by == "" and owned.verified_by == "curators"
    assert Claim.objects.get().researcher_id == owned.pk


def test_two_records_verified_by_their_owners_cannot_be_merged(user_factory, researcher_factory):
    from researchers.curation.decisions import CurationError, researchers_merge

    first, second = researcher_factory("Ada Lovelace"), researcher_factory("Ada Lovelace")
    for record in (first, second):
        claim = researcher_claim(user=user_factory(), researcher=record)
        claim_review(claim=claim, reviewer=None, confirm=True)
    with pytest.raises(CurationError, match="each verified by their owner"):
        researchers_merge(survivor_id=first.pk, folded_ids=[second.pk], actor=None)
    second.refresh_from_db()
    assert second.merged_into_id is None and Claim.objects.filter(researcher=first).count() == 1


def test_claims_waiting_for_the_curators_are_capped_per_account(
    client, researcher_factory, settings
):
    settings.CLAIMS_MAX_PENDING = 2
    user = get_user_model().objects.create_user("claimant", "c@example.org", "pw-12345678")
    records = [researcher_factory(f"Many Names{i}") for i in range(3)]
    for record in records[:2]:
        researcher_claim(user=user, researcher=record, message="me")
    with pytest.raises(ClaimRefused, match="2 claims waiting for the curators"):
        researcher_claim(user=user, researcher=records[2])
    # A claim already made is still the reader's to add words to.
    assert researcher_claim(user=user, researcher=records[0], message="me, really").message == (
        "me, really"
    )
    client.force_login(user)
    url = f"/following/researchers/{records[2].pk}/claim"
    html = client.post(url, {"message": "x"}, follow=True).content.decode()
    assert "2 claims waiting for the curators" in html
    assert Claim.objects.filter(user=user).count() == 2


def test_claims_made_in_an_hour_are_limited(researcher_factory, settings):
    settings.CLAIMS_PER_HOUR = 2
    user = get_user_model().objects.create_user("claimant", "c@example.org", "pw-12345678")
    records = [researcher_factory(f"Many Names{i}") for i in range(3)]
    for record in records[:2]:
        claim = researcher_claim(user=user, researcher=record)
        claim_review(claim=claim, reviewer=None, confirm=False)  # decided: not waiting
    with pytest.raises(ClaimRefused, match="2 claims in the last hour"):
        researcher_claim(user=user, researcher=records[2])


def test_this_is_me_asks_for_evidence_first_and_the_curators_admin_shows_it(
    client, user_factory, researcher_factory, authored_paper
):
    user = user_factory()
    researcher = researcher_factory("Ada Lovelace", paper_count=1)
    authored_paper(researcher, title="Notes on the analytical engine")
    client.force_login(user)
    url = f"/following/researchers/{researcher.pk}/claim"
    # The button leads to a confirm step: nothing is claimed by opening it.
    confirm = client.get(url, {"next": researcher.get_absolute_url()})
    assert confirm.status_code == 200 and not Claim.objects.exists()
    page = " ".join(confirm.content.decode().split())
    assert "What shows this is you" in page and '<textarea name="message"' in page
    assert "The curators decide" in page
    # Offline, no ORCID sign-in is set up: the page says so and what it would add.
    assert "ORCID sign-in is not set up on this site" in page
    assert "Nothing yet: no ORCID works" in page
    evidence = "My page at the Analytical Society lists these papers: example.org/ada"
    sent = client.post(url, {"message": evidence, "next": researcher.get_absolute_url()})
    assert sent.status_code == 302
    claim = Claim.objects.get(user=user, researcher=researcher)
    assert claim.message == evidence and claim.status == Claim.Status.PENDING
    # The curators see what the claimant wrote.
    curator = get_user_model().objects.create_superuser("curator", "c@example.org", "pw-12345678")
    client.force_login(curator)
    admin_page = client.get(f"/admin/accounts/claim/{claim.pk}/change/").content.decode()
    assert "example.org/ada" in admin_page
    # Opened again, the confirm step keeps what was written and offers to update it.
    client.force_login(user)
    again = client.get(url).content.decode()
    assert "example.org/ada" in again and "Update my claim" in again


def test_the_confirm_step_says_an_orcid_tie_verifies_at_once(
    client, orcid_user, researcher_factory, settings
):
    settings.SOCIALACCOUNT_PROVIDERS = {"orcid": {"APPS": [{"client_id": "i", "secret": "s"}]}}
    user = orcid_user()
    researcher = researcher_factory("Josiah Carberry")
    _orcid_link(researcher)
    client.force_login(user)
    page = client.get(f"/following/researchers/{researcher.pk}/claim").content.decode()
    assert "sending it verifies the page at once" in page
    assert not Claim.objects.exists()
