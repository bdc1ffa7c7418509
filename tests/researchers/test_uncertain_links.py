"""The curators' queue of uncertain links: recorded S2 and OpenAlex answers over HTTP make a
real low-confidence link, and a curator confirms or undoes it in the admin, each decision in
the audit trail, the public history and kept by later matching."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from papers.models import Authorship
from researchers.matching import match_papers
from researchers.models import CurationEntry, MatchReport, PinnedAuthorship
from researchers.selectors import uncertain_links

QUEUE = "/admin/researchers/researcher/curation/uncertain/"


@pytest.fixture
def signed_in(client, curator):
    """The client signed in as a staff user with the curation permission and nothing else."""
    client.force_login(curator)
    return curator


@pytest.fixture
def cinelli(sources, paper_factory, clean_cache):
    # The recorded S2 list reads "Ljubiša Bojić, Matteo Cinelli, D. Culibrk, Boris Delibasic";
    # the byline prints another given name for Cinelli, so only his slot and family name agree.
    paper = paper_factory(
        arxiv_id="2312.09402",
        authors=["Ljubisa Bojic", "Marco Cinelli", "Dubravko Culibrk", "Boris Delibasic"],
    )
    match_papers([paper.pk])
    link = Authorship.objects.get(paper=paper, position=2)
    assert (link.match_method, link.match_confidence) == ("same_slot", 0.5)
    return link


def decide(client, link, decision, note=""):
    return client.post(f"{QUEUE}{link.pk}/", {"decision": decision, "note": note, "page": "1"})


@pytest.mark.django_db
def test_only_curators_see_or_decide(client, reader_factory, cinelli):
    assert "/admin/login/" in client.get(QUEUE)["Location"]
    client.force_login(reader_factory(is_staff=True))
    assert client.get(QUEUE).status_code == 403
    assert decide(client, cinelli, "unlink").status_code == 403
    assert Authorship.objects.get(pk=cinelli.pk).researcher_id == cinelli.researcher_id


@pytest.mark.django_db
def test_the_queue_shows_the_evidence_in_bounded_queries(client, signed_in, cinelli):
    with CaptureQueriesContext(connection) as queries:
        links, total = uncertain_links()
    assert len(queries) == 4
    assert total == 1 and [link.authorship.pk for link in links] == [cinelli.pk]
    assert [n.name for n in links[0].neighbours] == ["Ljubisa Bojic", "Dubravko Culibrk"]
    assert all(n.researcher_id for n in links[0].neighbours)

    page = client.get(QUEUE).content.decode()
    assert "Marco Cinelli" in page
    # What the source calls the record, beside the printed name.
    assert "Matteo Cinelli" in page
    assert "the same place in the list and the same family name, 0.50" in page
    assert "Culibrk" in page and "Delibasic" not in page  # neighbours only
    past = client.get(f"{QUEUE}?page=9").content.decode()
    assert "No more on this page" in past and "Marco Cinelli" not in past
    queue = client.get("/admin/researchers/researcher/curation/").content.decode()
    assert QUEUE in queue


@pytest.mark.django_db
def test_confirming_makes_the_link_certain_and_matching_keeps_it(client, signed_in, cinelli):
    response = decide(client, cinelli, "confirm", note="Same person: ORCID on the PDF")
    assert response.status_code == 302 and response["Location"] == f"{QUEUE}?page=1"
    link = Authorship.objects.get(pk=cinelli.pk)
    assert (link.researcher_id, link.match_method, link.match_confidence) == (
        cinelli.researcher_id,
        "curator",
        1.0,
    )
    entry = CurationEntry.objects.get(action=CurationEntry.CONFIRM)
    assert entry.actor == signed_in and entry.note == "Same person: ORCID on the PDF"
    assert entry.before["method"] == "same_slot" and entry.before["confidence"] == 0.5
    assert PinnedAuthorship.objects.get(authorship=link).entry == entry
    assert uncertain_links()[1] == 0
    assert "No uncertain links left" in client.get(QUEUE).content.decode()
    # Matching again leaves the curator's decision.
    match_papers([link.paper_id])
    assert Authorship.objects.get(pk=cinelli.pk).match_method == "curator"
    page = client.get(link.paper.get_absolute_url()).content.decode()
    assert "Matched by a curator&#x27;s check, confidence 1.00" in page
    # Decided once: a second decision is refused with a message, nothing changes.
    decide(client, cinelli, "unlink")
    assert Authorship.objects.get(pk=cinelli.pk).researcher_id == cinelli.researcher_id
    assert CurationEntry.objects.count() == 1


@pytest.mark.django_db
def test_unlinking_takes_the_paper_off_and_answers_the_report(
    client, signed_in, cinelli, reader_factory
):
    record = cinelli.researcher
    report = MatchReport.objects.create(
        kind=MatchReport.NOT_BY,
        reporter=reader_factory(),
        researcher=record,
        authorship=cinelli,
    )
    decide(client, cinelli, "unlink", note="Marco is another Cinelli")
    link = Authorship.objects.get(pk=cinelli.pk)
    assert (link.researcher_id, link.match_method, link.match_confidence) == (None, "", None)
    entry = CurationEntry.objects.get(action=CurationEntry.UNLINK)
    assert entry.before["researcher"] == record.pk and entry.before["name"] == "Marco Cinelli"
    assert list(entry.researchers.all()) == [record]
    report.refresh_from_db()
    assert report.status == MatchReport.ACTED and report.closed_by == entry
    # The record's public history says what and when, never who.
    history = client.get(record.get_absolute_url()).content.decode()
    assert "Marco Cinelli" in history and "taken off" in history
    # Matching again leaves the name unlinked.
    match_papers([link.paper_id])
    assert Authorship.objects.get(pk=cinelli.pk).researcher_id is None


@pytest.mark.django_db
def test_a_certain_link_is_not_decided_here(client, signed_in, cinelli):
    sure = Authorship.objects.get(paper_id=cinelli.paper_id, position=1)
    response = decide(client, sure, "unlink")
    assert response.status_code == 302
    assert Authorship.objects.get(pk=sure.pk).researcher_id is not None
    assert not CurationEntry.objects.exists()
    assert decide(client, cinelli, "delete").status_code == 302
    assert Authorship.objects.get(pk=cinelli.pk).researcher_id is not None
