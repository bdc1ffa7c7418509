"""One person, one record (researchers.curation.same_person): records the sources' ids tie on
a byline slot are merged through the curators' merge (reversible, with history, old ids
leading to the survivor); same-name records no recorded id ties stay apart, listed for the
curators with their evidence. On the demo's real recorded answers, loaded as the demo loads
them (production's matching against the replay server)."""

from __future__ import annotations

import json

import pytest

from papers.models import Authorship
from researchers.curation.decisions import merge_split
from researchers.curation.queue import curation_clusters
from researchers.curation.same_person import same_person_merge, same_person_proposals
from researchers.models import CurationEntry, IdentityConflict, Researcher, ResearcherExternalId
from wovepaper.demo.identities import demo_identities_load
from wovepaper.demo.identity_truth import identity_truth, names_agree
from wovepaper.demo.replay import Recordings

# Attention Is All You Need (both sources), ViT (OpenAlex: Uszkoreit's OpenAlex record first),
# and papers of Ilya Sutskever and Tomas Mikolov in one source each.
S2_PAPERS = ["1706.03762", "1207.0580", "1310.4546", "1405.4053"]
OA_PAPERS = ["1706.03762", "2010.11929", "1603.04467", "1301.3781"]


def _subset(folder) -> Recordings:
    """The recorded answers of these papers only, as recorded (nothing edited)."""
    full = Recordings()
    from sources.openalex import work_arxiv_id

    data = {
        "semanticscholar_papers.json": {a: full.s2_papers[a] for a in S2_PAPERS},
        "semanticscholar_authors.json": {},
        "openalex_works.json": [
            w for w in full.openalex_works if work_arxiv_id(w["answer"]) in OA_PAPERS
        ],
        "openalex_authors.json": {},
        "arxiv_categories.json": {},
    }
    assert len(data["openalex_works.json"]) == len(OA_PAPERS)
    for name, value in data.items():
        (folder / name).write_text(json.dumps(value), encoding="utf-8")
    return Recordings(folder=folder)


def _live_holding(source: str, value: str) -> Researcher:
    return Researcher.objects.get(
        merged_into__isnull=True, external_ids__source=source, external_ids__value=value
    )


@pytest.fixture
def loaded(db, tmp_path, settings, django_capture_on_commit_callbacks):
    settings.MATCH_MERGE_SAME_PERSON = True
    recordings = _subset(tmp_path)
    # The matching task queues the rule once its transaction commits, as in production.
    with django_capture_on_commit_callbacks(execute=True) as queued:
        demo_identities_load(recordings)
    assert queued
    return recordings


def test_the_recordings_tie_uszkoreit_and_not_sutskever_or_mikolov():
    truth = identity_truth(Recordings())
    # Both sources give Attention's 4th slot, "Jakob Uszkoreit", their own id.
    assert truth.person("s2:39328010") == truth.person("openalex:A5022416424")
    assert truth.person("s2:1846258") == truth.person("openalex:A5021878400")  # Noam Shazeer
    # No recorded paper or iD ties these: two people as far as the recordings prove.
    assert truth.person("s2:1701686") != truth.person("openalex:A5006446297")
    assert truth.person("s2:2047446108") != truth.person("openalex:A5020917394")
    # A DBLP key on two Semantic Scholar author records.
    assert truth.person("s2:2239750768") == truth.person("s2:2262347")
    labelled = truth.labelled()
    assert "s2:39328010" in labelled and "s2:1701686" not in labelled
    assert names_agree("Noam M. Shazeer", "Shazeer, Noam")
    assert names_agree("I. Sutskever", "Ilya Sutskever")
    assert not names_agree("Noam Shazeer", "Niki Parmar")
    assert not names_agree("Jimmy Ba", "Diederik P. Kingma")


def test_records_the_sources_ids_tie_are_merged_after_matching(loaded, client):
    # Matching ran through the task, which ran the rule after it: one record for both ids.
    survivor = _live_holding("s2", "39328010")
    assert survivor == _live_holding("openalex", "A5022416424")
    assert survivor.external_ids.filter(source="orcid", value="0000-0001-5066-7530").exists()
    assert Authorship.objects.filter(researcher=survivor).count() == 2
    folded = Researcher.objects.get(merged_into=survivor)
    entry = CurationEntry.objects.get(action=CurationEntry.MERGE, researcher=survivor)
    assert entry.actor is None
    assert "identity rule" in entry.note and "arXiv:1706.03762" in entry.note
    assert "39328010" in entry.note and "A5022416424" in entry.note
    assert not IdentityConflict.objects.filter(
        researcher_id__in=[survivor.pk, folded.pk], status=IdentityConflict.OPEN
    ).exists()
    # The folded record's page and API id lead to the survivor.
    page = client.get(f"/researchers/{folded.pk}")
    assert page.status_code == 301 and page["Location"].startswith(f"/researchers/{survivor.pk}")
    # The public history says so, with the rule's evidence as its reason.
    page = client.get(survivor.get_absolute_url()).content.decode()
    assert "folded into one" in page
    assert "Reason given: “arXiv:1706.03762 byline #4 “Jakob Uszkoreit”" in page
    # A rerun does nothing more.
    again = same_person_merge()
    assert again.merged == [] and again.left == []
    # The other pair the sources tie on Attention's byline: Noam Shazeer (TensorFlow's OpenAlex
    # record, "Noam M. Shazeer" in Semantic Scholar).
    assert _live_holding("s2", "1846258") == _live_holding("openalex", "A5021878400")
    assert CurationEntry.objects.filter(action=CurationEntry.MERGE).count() == 2


def test_a_merge_by_the_rule_is_undone_by_a_split_and_stays_undone(loaded, curator, client):
    survivor = _live_holding("s2", "39328010")
    folded = Researcher.objects.get(merged_into=survivor)
    entry = CurationEntry.objects.get(action=CurationEntry.MERGE, researcher=survivor)
    assert entry.after["folded"] == [folded.pk]
    merge_split(entry_id=entry.pk, actor=curator, note="checking")
    folded.refresh_from_db()
    assert folded.merged_into_id is None
    ids = {(e.source, e.value) for e in folded.external_ids.all()} | {
        (e.source, e.value) for e in Researcher.objects.get(pk=survivor.pk).external_ids.all()
    }
    assert ("s2", "39328010") in ids and ("openalex", "A5022416424") in ids
    assert _live_holding("s2", "39328010") != _live_holding("openalex", "A5022416424")
    # Its old id leads to its own page again, not to the survivor.
    assert client.get(f"/researchers/{folded.pk}")["Location"] == folded.get_absolute_url()
    assert client.get(folded.get_absolute_url()).status_code == 200
    # The split reopened the sources' conflicts, but a curator's split is not undone.
    outcome = same_person_merge()
    assert outcome.merged == []
    assert [left["why_not"] for left in outcome.left] == [
        ["a curator split a merge of these records before"]
    ]


def test_sutskever_and_mikolov_stay_two_records_listed_for_the_curators(loaded):
    ilya = Researcher.objects.filter(merged_into__isnull=True, name_key="ilya sutskever")
    assert ilya.count() == 2
    sources = {e.source for r in ilya for e in r.external_ids.all()}
    assert sources == {"s2", "openalex"}
    mikolov = Researcher.objects.filter(merged_into__isnull=True, name_key="tomas mikolov")
    assert sorted(r.display_name for r in mikolov) == ["Tomas Mikolov", "Tomáš Mikolov"]
    for prefix, records in (("ilya", ilya), ("tomas", mikolov)):
        clusters = curation_clusters(prefix=prefix)
        assert len(clusters) == 1
        (pair,) = clusters[0].pairs
        assert {pair.a, pair.b} == {r.pk for r in records}
        assert pair.evidence_against() == []
    assert not CurationEntry.objects.filter(researchers__in=[*ilya, *mikolov]).exists()
    # Proposed to the curators with the co-authors the two records share: by name, since the
    # sources split those co-authors into one record each as well.
    proposals = {(p.low.pk, p.high.pk): p for p in same_person_proposals()}
    ilya_pair = proposals[tuple(sorted(r.pk for r in ilya))]
    assert ilya_pair.names == "same name key"
    assert "Jeffrey Dean ~ J. Dean" in ilya_pair.coauthors
    mikolov_pair = proposals[tuple(sorted(r.pk for r in mikolov))]
    assert any(c.startswith("Kai Chen") for c in mikolov_pair.coauthors)
    assert len(mikolov_pair.coauthors) == 3
    # Still nothing merged on names and co-authors.
    assert Researcher.objects.filter(name_key="ilya sutskever", merged_into=None).count() == 2


def test_name_variants_sharing_co_authors_are_proposed_not_merged(researcher_factory):
    shared = researcher_factory("A. Seza Doğruöz")
    coauthor = [{"id": shared.pk, "name": shared.display_name, "count": 1}]
    short = researcher_factory("G. Skantze", coauthors=coauthor)
    full = researcher_factory("Gabriel Skantze", coauthors=coauthor)
    researcher_factory("Gabriel Skantze-Other", coauthors=coauthor)
    researcher_factory("Gustav Skantze")  # no co-author in common
    proposals = same_person_proposals()
    assert [(p.low.pk, p.high.pk, p.names) for p in proposals] == [(short.pk, full.pk, "initials")]
    assert proposals[0].coauthors == ["A. Seza Doğruöz"]
    assert same_person_proposals(min_coauthors=2) == []
    assert Researcher.objects.filter(merged_into__isnull=False).count() == 0


def test_the_curators_queue_lists_name_variant_proposals(researcher_factory, curator, client):
    shared = researcher_factory("A. Seza Doğruöz")
    coauthor = [{"id": shared.pk, "name": shared.display_name, "count": 1}]
    short = researcher_factory("G. Skantze", coauthors=coauthor)
    full = researcher_factory("Gabriel Skantze", coauthors=coauthor)
    client.force_login(curator)
    page = client.get("/admin/researchers/researcher/curation/?q=g").content.decode()
    assert "Name variants with co-authors in common" in page
    assert f"G. Skantze #{short.pk}" in page and f"Gabriel Skantze #{full.pk}" in page
    assert f"?ids={short.pk},{full.pk}" in page and "A. Seza Doğruöz" in page
    # Decided "not the same person": no longer proposed.
    from researchers.curation.decisions import researchers_mark_distinct

    researchers_mark_distinct(first_id=short.pk, second_id=full.pk, actor=curator)
    page = client.get("/admin/researchers/researcher/curation/?q=g").content.decode()
    assert f"G. Skantze #{short.pk}" not in page


def test_a_pair_holding_two_ids_of_one_source_is_left_to_the_curators(researcher_factory):
    first, second = researcher_factory("Ann Example"), researcher_factory("Ann Example")
    ResearcherExternalId.objects.create(researcher=first, source="s2", value="111")
    ResearcherExternalId.objects.create(researcher=second, source="s2", value="222")
    ResearcherExternalId.objects.create(researcher=second, source="openalex", value="A1")
    IdentityConflict.objects.create(
        kind=IdentityConflict.UNLINKED,
        researcher=first,
        other_researcher=second,
        s2_id="111",
        openalex_id="A1",
        name_as_written="Ann Example",
    )
    outcome = same_person_merge()
    assert outcome.merged == []
    assert outcome.left[0]["why_not"] == ["both records hold a Semantic Scholar id"]
    assert not Researcher.objects.filter(merged_into__isnull=False).exists()
    assert IdentityConflict.objects.get().status == IdentityConflict.OPEN
