"""Records that name no one, made before the byline rules, are cleaned away by `clean_bylines`,
shown nowhere afterwards, and put back by the curators' history.

The papers are built as the earlier code built them from real answers: Semantic Scholar's author
list for 0804.0849 (wovepaper/demo/recordings), each name an authorship, and arXiv's byline of
0801.4016 split at commas and "and" (../shared/corpus, arXivRaw page 0801.*).
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from researchers.byline_cleanup import byline_cleanup_undo
from researchers.curation.identity import researcher_public_history
from researchers.curation.queue import curation_clusters
from researchers.models import CurationEntry, IdentityConflict, Researcher
from researchers.page_figures import researchers_update_stats
from researchers.selectors import (
    researchers_active_in_category,
    researchers_browse,
    researchers_named,
)
from wovepaper.sitemaps import ResearcherSitemap

ROOT = Path(__file__).resolve().parent.parent.parent
S2_PAPERS = ROOT / "wovepaper" / "demo" / "recordings" / "semanticscholar_papers.json"
# 0801.4016 as the old split made it: the note became two "authors".
OLD_SPLIT_0801_4016 = [
    "T. Yamazaki",
    "Y. Aoki",
    "T. Blum",
    "H. W. Lin",
    "M. F. Lin",
    "S. Ohta",
    "S. Sasaki",
    "R. J. Tweedie",
    "J. M. Zanotti",
    "for the RBC",
    "UKQCD Collaborations",
]


@pytest.fixture
def old_world(paper_factory, researcher_factory, link_author):
    names = [a["name"] for a in json.loads(S2_PAPERS.read_text())["0804.0849"]["answer"]["authors"]]
    # No arXiv record of 0804.0849 in the demo: the paper has no v1 date and the source's list.
    vlbi = paper_factory(
        arxiv_id="0804.0849", authors=names, categories=["astro-ph"], published=None
    )
    lattice = paper_factory(arxiv_id="0801.4016", authors=OLD_SPLIT_0801_4016)
    records = {}
    for position, name in enumerate(names, start=1):
        records[name] = researcher_factory(name, h_index=5 if name == "A. Building" else None)
        link_author(vlbi, position, records[name])
    records["UKQCD Collaborations"] = researcher_factory("UKQCD Collaborations")
    link_author(lattice, 11, records["UKQCD Collaborations"])
    # Two records the queue's conflicts would have a curator merge.
    IdentityConflict.objects.create(
        kind=IdentityConflict.UNLINKED,
        researcher=records["J. B. C. F. Astrophysics"],
        other_researcher=records["UK."],
        s2_id="152162130",
    )
    researchers_update_stats([r.pk for r in records.values()])
    return vlbi, lattice, records


def _visible_names() -> set[str]:
    listed = {r.display_name for r in researchers_browse(limit=500)}
    listed |= {r.display_name for r in researchers_named("manchester")}
    listed |= {r.display_name for r in ResearcherSitemap().items()}
    for cluster in curation_clusters(limit=50):
        listed |= {r.display_name for r in cluster.records}
    listed |= {r.display_name for r, _ in researchers_active_in_category("astro-ph", limit=50)}
    for r in Researcher.objects.all():
        listed |= {c["name"] for c in r.coauthors}
    return listed


NOT_PEOPLE = {"A. Building", "UK.", "Socorro", "Nm", "U.S.A.", "J. B. C. F. Astrophysics"}


@pytest.mark.django_db
def test_clean_bylines_removes_non_people_everywhere_and_a_rerun_changes_nothing(old_world):
    vlbi, lattice, records = old_world
    assert NOT_PEOPLE <= _visible_names()  # as the issue saw them

    out = StringIO()
    call_command("clean_bylines", stdout=out)
    output = out.getvalue()
    assert "removed  0804.0849: A. Building" in output
    assert "removed  0801.4016: for the RBC" in output

    assert list(vlbi.authorships.order_by("position").values_list("name", flat=True)) == [
        "W. Goss",
        "A. Richards",
        "T. Muxlow",
    ]
    muxlow = vlbi.authorships.get(position=3)
    assert muxlow.researcher == records["T. Muxlow"]
    assert muxlow.affiliation.startswith("P. Observatory, Socorro, Nm, U.S.A.")
    assert lattice.authorships.count() == 9
    for name in NOT_PEOPLE | {"UKQCD Collaborations", "Cheshire", "Macclesfield"}:
        record = Researcher.objects.get(pk=records[name].pk)
        assert not record.is_person, name
        assert not record.authorships.exists()
    assert Researcher.objects.get(pk=records["W. Goss"].pk).is_person
    assert not NOT_PEOPLE & _visible_names()
    assert {"W. Goss", "A. Richards", "T. Muxlow"} <= _visible_names()
    assert not IdentityConflict.objects.filter(status=IdentityConflict.OPEN).exists()
    client = Client()
    assert client.get(f"/researchers/{records['A. Building'].pk}/feed.rss").status_code == 404
    assert client.get(f"/researchers/{records['W. Goss'].pk}/feed.rss").status_code == 200

    # Each change is in the curators' history, on the record's page too.
    assert CurationEntry.objects.filter(action=CurationEntry.BYLINE).count() == 2
    marked = CurationEntry.objects.filter(action=CurationEntry.NOT_PERSON)
    # Every record of 0804.0849 but its three people, and "UKQCD Collaborations".
    assert marked.count() == len(records) - 3
    history = researcher_public_history(records["A. Building"])
    assert any("found to name no person" in item.text for item in history)

    entries = CurationEntry.objects.count()
    out = StringIO()
    call_command("clean_bylines", stdout=out)
    assert "0 papers changed: 0 authorships removed" in out.getvalue()
    assert "0 researcher records marked" in out.getvalue()
    assert CurationEntry.objects.count() == entries


@pytest.mark.django_db
def test_curators_can_undo_a_cleanup_from_its_history_entries(old_world):
    vlbi, _, records = old_world
    before = list(vlbi.authorships.order_by("position").values_list("pk", "name", "researcher_id"))
    call_command("clean_bylines", stdout=StringIO())
    building = records["A. Building"]
    marked = CurationEntry.objects.get(action=CurationEntry.NOT_PERSON, researcher=building)
    byline = CurationEntry.objects.get(action=CurationEntry.BYLINE, before__paper=vlbi.pk)

    byline_cleanup_undo(entry_id=byline.pk)
    for entry in CurationEntry.objects.filter(action=CurationEntry.NOT_PERSON, undone_by=None):
        if entry.after.get("is_person") is False:
            byline_cleanup_undo(entry_id=entry.pk)
    after = list(vlbi.authorships.order_by("position").values_list("pk", "name", "researcher_id"))
    assert after == before
    assert Researcher.objects.get(pk=building.pk).is_person
    marked.refresh_from_db()
    assert marked.undone_by_id is not None
    with pytest.raises(ValueError):
        byline_cleanup_undo(entry_id=marked.pk)


@pytest.mark.django_db
def test_a_record_with_a_real_name_and_its_own_papers_is_left_alone(
    paper_factory, researcher_factory, link_author
):
    # R. N. Manchester (0705.0057 in the bundled sample) is a person.
    paper = paper_factory(
        arxiv_id="0705.0057",
        authors=["B. M. Gaensler", "L. Staveley-Smith", "R. N. Manchester", "M. J. Kesteven"],
    )
    manchester = researcher_factory("R. N. Manchester")
    link_author(paper, 3, manchester)
    # Semantic Scholar glued an address to Jim Q. Smith (1811.08872); matched to his byline
    # name, the record is his, whatever it is called.
    smith_paper = paper_factory(arxiv_id="1811.08872", authors=["Aditi Shenvi", "Jim Q. Smith"])
    smith = researcher_factory("Jim Q. Smith The University of Warwick")
    link_author(smith_paper, 2, smith)
    call_command("clean_bylines", stdout=StringIO())
    assert Researcher.objects.get(pk=manchester.pk).is_person
    assert Researcher.objects.get(pk=smith.pk).is_person
    assert paper.authorships.count() == 4
    assert not CurationEntry.objects.exists()


@pytest.mark.django_db
def test_a_curator_undoes_a_record_marked_no_person_from_the_admin_history(old_world, curator):
    _, _, records = old_world
    call_command("clean_bylines", stdout=StringIO())
    building = records["A. Building"]
    entry = CurationEntry.objects.get(action=CurationEntry.NOT_PERSON, researcher=building)
    client = Client()
    client.force_login(curator)
    response = client.post(
        "/admin/researchers/curationentry/",
        {"action": "undo_byline_cleanup", "_selected_action": [entry.pk]},
    )
    assert response.status_code == 302
    assert Researcher.objects.get(pk=building.pk).is_person
    entry.refresh_from_db()
    assert entry.undone_by.actor == curator
