"""A verified researcher corrects their own page: "not mine", "mine too", a merge proposal, the
name, current affiliation, homepage and listing; each change in the public history with its
reason and in the identity-links export, and the curators undoing it."""

from __future__ import annotations

import gzip
import json

import pytest
from django.contrib.auth import get_user_model

from accounts.ownership.claims import researcher_claim
from accounts.ownership.reviews import claim_review
from institutions.clients.ror import parse_organization
from institutions.models import Institution
from papers.models import Authorship
from researchers.curation.identity import researcher_same_name_explained
from researchers.identity_links import FILE_NAME, identity_links_export
from researchers.models import CurationEntry, MatchReport, PinnedAuthorship, Researcher
from researchers.name_search import researchers_search
from researchers.owner_edits import OwnershipError, owner_edit, owner_paper_attach

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(user_factory):
    return user_factory()


@pytest.fixture
def page(owner, researcher_factory):
    """The owner's verified record (confirmed by the curators)."""
    researcher = researcher_factory("Ada Lovelace")
    claim_review(
        claim=researcher_claim(user=owner, researcher=researcher), reviewer=None, confirm=True
    )
    researcher.refresh_from_db()
    return researcher


@pytest.fixture
def curator(db):
    return get_user_model().objects.create_superuser("curator", "cur@example.org", "pw-12345678")


def _byline(paper, researcher) -> Authorship:
    return Authorship.objects.get(paper=paper, researcher=researcher)


def _undo(client, curator, entry: CurationEntry, reason: str):
    client.force_login(curator)
    return client.post(
        "/admin/researchers/curationentry/",
        {
            "action": "undo_owner_change",
            "_selected_action": [entry.pk],
            "apply": "1",
            "reason": reason,
        },
    )


def test_only_the_verified_owner_reaches_the_correction_pages(
    client, page, owner, user_factory, researcher_factory
):
    url = f"/me/researchers/{page.pk}"
    assert client.get(url).status_code == 302  # signed out: to sign in
    client.force_login(user_factory())
    assert client.get(url).status_code == 404
    waiting = user_factory()
    other = researcher_factory("Ada Lovelace")
    researcher_claim(user=waiting, researcher=other)
    client.force_login(waiting)
    assert client.get(f"/me/researchers/{other.pk}").status_code == 404
    client.force_login(owner)
    assert client.get(url).status_code == 200
    md = client.get(url, HTTP_ACCEPT="text/markdown")
    assert md["Content-Type"].startswith("text/markdown")
    assert "# Your page: Ada Lovelace" in md.content.decode()


def test_not_mine_leaves_the_page_at_once_and_curators_can_undo_it(
    client, page, owner, curator, authored_paper
):
    paper = authored_paper(page, title="On the Analytical Engine")
    kept = authored_paper(page, title="Notes on the Engine")
    byline = _byline(paper, page)
    public = page.get_absolute_url()
    assert "On the Analytical Engine" in client.get(public).content.decode()  # now cached

    client.force_login(owner)
    response = client.post(
        f"/me/researchers/{page.pk}/not-mine",
        {"authorship": byline.pk, "reason": "A namesake in Leeds wrote it"},
    )
    assert response.status_code == 302
    byline.refresh_from_db()
    assert byline.researcher_id is None and byline.name == "Ada Lovelace"
    assert PinnedAuthorship.objects.filter(authorship=byline).exists()
    page.refresh_from_db()
    assert page.paper_count == 1

    client.logout()
    html = client.get(public).content.decode()
    assert "On the Analytical Engine" not in html.split('id="papers"')[1]
    assert "Notes on the Engine" in html
    assert "Removed by the researcher" in html and "A namesake in Leeds wrote it" in html
    assert "Ada Lovelace" in client.get(paper.get_absolute_url()).content.decode()

    entry = CurationEntry.objects.get(action=CurationEntry.OWNER_REMOVED)
    _undo(client, curator, entry, "The paper's ORCID says it is hers")
    byline.refresh_from_db()
    assert byline.researcher_id == page.pk
    entry.refresh_from_db()
    assert entry.undone_by is not None
    client.logout()
    html = client.get(public).content.decode()
    assert "On the Analytical Engine" in html
    assert "The paper&#x27;s ORCID says it is hers" in html or "ORCID says it is hers" in html
    assert "curator" not in entry.undone_by.after.get("reason", "")
    assert kept.title in html


def test_reason_is_required(client, page, owner, authored_paper):
    byline = _byline(authored_paper(page), page)
    client.force_login(owner)
    response = client.post(
        f"/me/researchers/{page.pk}/not-mine", {"authorship": byline.pk, "reason": " "}, follow=True
    )
    # The owner reached the form (no 403, no CSRF failure) and was told what was missing.
    assert response.redirect_chain[0] == (f"/me/researchers/{page.pk}", 302)
    assert "Say why, in a few words: the reason is public." in [
        str(m) for m in response.context["messages"]
    ]
    byline.refresh_from_db()
    assert byline.researcher_id == page.pk


def test_a_stranger_cannot_remove_a_paper_from_someone_elses_page(
    client, page, user_factory, authored_paper
):
    byline = _byline(authored_paper(page), page)
    client.force_login(user_factory())
    response = client.post(
        f"/me/researchers/{page.pk}/not-mine", {"authorship": byline.pk, "reason": "mischief"}
    )
    assert response.status_code == 404
    byline.refresh_from_db()
    assert byline.researcher_id == page.pk


def test_mine_too_takes_a_paper_from_a_same_name_record_only(
    client, page, owner, curator, researcher_factory, authored_paper
):
    namesake = researcher_factory("Ada Lovelace")
    stranger = researcher_factory("Charles Babbage")
    theirs = _byline(authored_paper(namesake, title="Sketch of the Engine"), namesake)
    babbage = _byline(authored_paper(stranger), stranger)
    client.force_login(owner)
    owner_html = client.get(f"/me/researchers/{page.pk}").content.decode()
    assert "Sketch of the Engine" in owner_html  # offered from the same-name record
    client.post(
        f"/me/researchers/{page.pk}/mine-too",
        {"authorship": theirs.pk, "reason": "My translation, with notes"},
    )
    theirs.refresh_from_db()
    assert theirs.researcher_id == page.pk
    with pytest.raises(OwnershipError, match="same-name"):
        owner_paper_attach(researcher_id=page.pk, authorship_id=babbage.pk, reason="mine")
    entry = CurationEntry.objects.get(action=CurationEntry.OWNER_ATTACHED)
    assert set(entry.researchers.values_list("pk", flat=True)) == {page.pk, namesake.pk}
    client.logout()
    assert "Added by the researcher" in client.get(namesake.get_absolute_url()).content.decode()

    _undo(client, curator, entry, "The translator was another Ada")
    theirs.refresh_from_db()
    assert theirs.researcher_id == namesake.pk


def test_a_merge_proposal_reaches_the_curators_and_the_evidence_panel(
    client, page, owner, curator, researcher_factory
):
    namesake = researcher_factory("Ada Lovelace")
    client.force_login(owner)
    client.post(
        f"/me/researchers/{page.pk}/propose-merge",
        {"others": [namesake.pk], "reason": "Both are my papers from Ockham"},
    )
    report = MatchReport.objects.get(kind=MatchReport.SAME_PERSON)
    assert (report.researcher_id, report.other_researcher_id) == (page.pk, namesake.pk)
    assert "Both are my papers from Ockham" in report.note
    (explained,) = researcher_same_name_explained(page)
    assert explained.evidence.owner_proposed
    assert any("proposed merging" in line for line in explained.evidence.evidence_for())
    client.force_login(curator)
    queue = client.get("/admin/researchers/researcher/curation/").content.decode()
    assert "proposed merging" in queue
    assert Researcher.objects.get(pk=namesake.pk).merged_into_id is None  # curators decide


def test_profile_changes_show_on_the_page_and_in_the_export(
    client, page, owner, curator, fixtures_dir, tmp_path
):
    records = json.loads((fixtures_dir / "ror" / "records_v2_from_es_search.json").read_text())
    record = parse_organization(next(r for r in records if r["id"].endswith("00rqy9422")))
    uq = Institution.objects.create(name=record.name, ror_id=record.ror_id, website=record.website)
    client.force_login(owner)
    client.post(
        f"/me/researchers/{page.pk}/profile",
        {
            "display_name": "Augusta Ada King",
            "institution": "",
            "ror_id": f"https://ror.org/{record.ror_id}",
            "homepage": "https://example.org/ada",
            "reason": "My full name and where I work now",
        },
    )
    page.refresh_from_db()
    assert page.display_name == "Augusta Ada King" and page.name_key == "ada lovelace"
    assert page.current_institution_id == uq.pk and page.homepage == "https://example.org/ada"
    assert CurationEntry.objects.filter(action=CurationEntry.OWNER_EDITED).count() == 3
    client.logout()
    html = client.get(page.get_absolute_url()).content.decode()
    assert "<h1>Augusta Ada King</h1>" in html
    assert "University of Queensland" in html and "as the researcher gives it" in html
    assert 'href="https://example.org/ada" rel="nofollow ugc noopener"' in html
    assert "The researcher changed the name shown: Ada Lovelace → Augusta Ada King." in html

    identity_links_export(tmp_path)
    with gzip.open(tmp_path / FILE_NAME, "rt") as rows:
        row = next(r for r in map(json.loads, rows) if r["id"] == page.pk)
    assert row["owner"] == {
        "homepage": "https://example.org/ada",
        "institution_ror_id": record.ror_id,
        "hidden": False,
    }
    changes = {c["field"]: c for c in row["owner_changes"] if c["action"] == "owner_edited"}
    assert changes["display_name"]["reason"] == "My full name and where I work now"
    assert changes["display_name"]["value"] == "Augusta Ada King"

    entry = CurationEntry.objects.get(action=CurationEntry.OWNER_EDITED, after__field="homepage")
    _undo(client, curator, entry, "The homepage is not hers")
    page.refresh_from_db()
    assert page.homepage == ""


def test_a_hidden_page_leaves_lists_and_search_but_stays_public(
    client, page, owner, authored_paper, settings
):
    paper = authored_paper(page)
    page.paper_count = 1
    page.save()
    assert page.pk in [r.pk for r in researchers_search("lovelace").items]
    owner_edit(researcher_id=page.pk, field="hidden", value=True, reason="Privacy")
    assert page.pk not in [r.pk for r in researchers_search("lovelace").items]
    assert page.get_absolute_url() not in client.get("/researchers").content.decode()
    api = client.get("/api/v1/researchers/").json()
    assert page.pk not in [r["id"] for r in api["results"]]
    html = client.get(page.get_absolute_url()).content.decode()
    assert '<meta name="robots" content="noindex">' in html
    assert "chose to leave this page out of the researcher lists" in html
    assert page.get_absolute_url() in client.get(paper.get_absolute_url()).content.decode()
    assert owner_edit(researcher_id=page.pk, field="hidden", value=True, reason="again") is None


def test_owner_page_queries_are_bounded(
    client, page, owner, researcher_factory, authored_paper, django_assert_max_num_queries
):
    for _ in range(3):
        authored_paper(page)
    for _ in range(3):
        authored_paper(researcher_factory("Ada Lovelace"))
    client.force_login(owner)
    client.get(f"/me/researchers/{page.pk}")
    for _ in range(5):
        authored_paper(researcher_factory("Ada Lovelace"))
    with django_assert_max_num_queries(30):
        assert client.get(f"/me/researchers/{page.pk}").status_code == 200


def test_a_page_number_past_any_integer_is_the_first_page_not_a_500(client, page, owner):
    client.force_login(owner)
    client.raise_request_exception = False
    for number in ("99999999999999999999", "9223372036854775807", "401"):
        response = client.get(f"/me/researchers/{page.pk}", {"page": number})
        assert response.status_code == 200, number


def test_a_refused_part_keeps_what_was_typed_says_which_part_and_changes_nothing(
    client, page, owner, authored_paper, fixtures_dir
):
    records = json.loads((fixtures_dir / "ror" / "records_v2_from_es_search.json").read_text())
    record = parse_organization(next(r for r in records if r["id"].endswith("00rqy9422")))
    uq = Institution.objects.create(name=record.name, ror_id=record.ror_id, website=record.website)
    paper = authored_paper(page)
    from institutions.models import AuthorshipInstitution

    AuthorshipInstitution.objects.create(
        authorship=_byline(paper, page), paper=paper, institution=uq
    )
    client.force_login(owner)
    # The form's example is an institution we hold (one on the owner's bylines).
    form = client.get(f"/me/researchers/{page.pk}").content.decode()
    assert f"e.g. https://ror.org/{record.ror_id} ({record.name})" in form
    assert "02bfwt286" not in form
    sent = {
        "display_name": "Augusta Ada King",
        "institution": "",
        "ror_id": "https://ror.org/02bfwt286",  # not held here
        "homepage": "https://example.org/ada",
        "reason": "Where I work now",
    }
    answer = client.post(f"/me/researchers/{page.pk}/profile", sent)
    assert answer.status_code == 200  # the form again, as a browser shows a page
    html = answer.content.decode()
    # Which part, by its label, and beside the field; the rest as typed.
    assert "Nothing changed: the ROR id could not be saved as written" in html
    assert "We hold no institution with this ROR id" in html
    for value in ("Augusta Ada King", "https://example.org/ada", "Where I work now"):
        assert f'value="{value}"' in html or f">{value}<" in html, value
    page.refresh_from_db()
    assert page.display_name == "Ada Lovelace" and page.homepage == ""
    assert not CurationEntry.objects.filter(action=CurationEntry.OWNER_EDITED).exists()
    # Corrected, it all goes through.
    sent["ror_id"] = record.ror_id
    assert client.post(f"/me/researchers/{page.pk}/profile", sent).status_code == 302
    page.refresh_from_db()
    assert page.homepage == "https://example.org/ada" and page.current_institution_id == uq.pk


def test_owner_settings_set_checks_every_field_before_writing_any(page):
    from researchers.owner_edits import OwnerFieldsRefused, owner_settings_set

    with pytest.raises(OwnerFieldsRefused) as refused:
        owner_settings_set(
            researcher_id=page.pk,
            changes={"display_name": "Augusta Ada King", "homepage": "ftp://example.org"},
            reason="Name and homepage",
        )
    assert set(refused.value.refused) == {"homepage"}
    page.refresh_from_db()
    assert page.display_name == "Ada Lovelace"
    assert not CurationEntry.objects.filter(action=CurationEntry.OWNER_EDITED).exists()
