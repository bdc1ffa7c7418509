"""Matching end to end: recorded S2 and OpenAlex answers over HTTP, a real database.

The papers are built in the database with arXiv-style bylines for the recorded papers (full
given names where the sources abbreviate, accents dropped or kept, an extra author), since the
corpus holds no arXiv record of these papers.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.utils import timezone

from institutions.models import AuthorshipInstitution, Institution
from papers.models import Authorship, Paper
from researchers.matching import match_papers, match_run, papers_to_match
from researchers.models import (
    IdentityConflict,
    MatchRun,
    PaperMatchState,
    Researcher,
    ResearcherExternalId,
)
from tests.sources.conftest import load

LLAMA = [
    "Hugo Touvron",
    "Thibaut Lavril",
    "Gautier Izacard",
    "Xavier Martinet",
    "Marie-Anne Lachaux",
    "Timothée Lacroix",
    "Baptiste Rozière",
    "Naman Goyal",
    "Eric Hambro",
    "Faisal Azhar",
    "Aurelien Rodriguez",
    "Armand Joulin",
    "Edouard Grave",
    "Guillaume Lample",
]
BYLINES = {
    "2302.13971": LLAMA,
    # S2 lists "F. Liwicki" and "M. Liwicki": two co-authors with one surname.
    "2205.00965": ["Tosin P. Adewumi", "Foteini Liwicki", "Marcus Liwicki"],
    # S2 writes "Miguel Bordallo L'opez" (a TeX accent gone wrong) and "Constantino Álvarez Casado".
    "2309.13970": ["Miguel Bordallo López", "Constantino Álvarez Casado"],
    # Accents dropped in the byline; S2 has "Ljubiša Bojić" and an initial for Culibrk.
    "2312.09402": ["Ljubisa Bojic", "Matteo Cinelli", "Dubravko Culibrk", "Boris Delibasic"],
    "1105.0149": ["Ali Khajeh-Hosseini", "Ian Sommerville", "Jurgen Bogaerts", "Pradeep Teregowda"],
    "1209.5246": ["Ian Sommerville", "Russell Lock", "Tim Storer"],
    # An author the source does not list: counts differ.
    "2302.01339": ["Eric Schwitzgebel", "David Schwitzgebel", "Anna Strasser", "Matthew Crosby"],
    # Only OpenAlex knows this one (raw names "J. C. Roberts", "J. W. Mearman", ...).
    "2108.04680": [
        "Jonathan C. Roberts",
        "Joseph W. Mearman",
        "Peter W. S. Butcher",
        "Hayder M. Al-Maneea",
        "Panagiotis D. Ritsos",
    ],
    # S2 gives "P. Ferreira" two different author ids on these two papers.
    "2211.11461": ["Deaglan J. Bartlett", "Harry Desmond", "Pedro G. Ferreira"],
    "2304.06333": ["Deaglan J. Bartlett", "Harry Desmond", "Pedro G. Ferreira"],
    # Known to neither source.
    "2401.99999": ["Nobody Known", "Another Unknown"],
}


@pytest.fixture
def papers(paper_factory):
    made = {}
    for n, (arxiv_id, authors) in enumerate(BYLINES.items()):
        made[arxiv_id] = paper_factory(
            arxiv_id=arxiv_id,
            authors=authors,
            categories=["cs.CL", "cs.LG"] if n % 2 else ["cs.DL"],
            published=datetime(2024, 1, 1 + n, tzinfo=UTC),
        )
    return made


def researcher_at(paper: Paper, position: int) -> Researcher | None:
    return Authorship.objects.get(paper=paper, position=position).researcher


def ext(researcher: Researcher) -> dict[str, str]:
    return dict(researcher.external_ids.values_list("source", "value"))


@pytest.mark.django_db
def test_match_attaches_every_author_of_a_paper_both_sources_know(sources, papers, clean_cache):
    state_before = timezone.now()
    result = match_papers([p.pk for p in papers.values()])
    assert result.failed == 0 and not result.errors
    llama = Paper.objects.get(arxiv_id="2302.13971")
    assert llama.semantic_scholar_id == sources.s2_papers["2302.13971"]["paperId"]
    assert llama.openalex_id == "W4322718191"
    assert llama.cited_by_count == 5708  # Semantic Scholar's count comes first
    touvron = researcher_at(llama, 1)
    assert ext(touvron) == {
        "s2": "2113243762",
        "openalex": "A5032644449",
        "orcid": "0000-0003-1678-392X",
    }
    grave = researcher_at(llama, 13)
    # OpenAlex's display name keeps the accent the byline dropped.
    assert ext(grave) == {"s2": "3024698", "openalex": "A5069316249"}
    assert grave.display_name == "Édouard Grave"
    assert grave.name_key == "edouard grave"
    assert all(a.researcher_id for a in llama.authorships.all())
    # When each was attached, for the digests of the researchers' followers.
    assert all(a.matched_at and a.matched_at >= state_before for a in llama.authorships.all())
    state = PaperMatchState.objects.get(paper=llama)
    assert (state.status, state.s2_status, state.openalex_status) == ("matched", "found", "found")
    assert state.next_attempt_at is None and state.matched_authors == 14


@pytest.mark.django_db
def test_two_coauthors_with_one_surname_get_their_own_records(sources, papers, clean_cache):
    match_papers([papers["2205.00965"].pk])
    foteini = researcher_at(papers["2205.00965"], 2)
    marcus = researcher_at(papers["2205.00965"], 3)
    assert ext(foteini) == {"s2": "80342407"}
    assert ext(marcus) == {"s2": "1743758"}
    # The byline's full names replace S2's initials.
    assert (foteini.display_name, marcus.display_name) == ("Foteini Liwicki", "Marcus Liwicki")


@pytest.mark.django_db
def test_non_ascii_and_accent_dropped_names_align(sources, papers, clean_cache):
    match_papers([papers["2309.13970"].pk, papers["2312.09402"].pk])
    assert ext(researcher_at(papers["2309.13970"], 1)) == {"s2": "2215860070"}
    assert ext(researcher_at(papers["2309.13970"], 2)) == {"s2": "115314432"}
    bojic = researcher_at(papers["2312.09402"], 1)
    assert ext(bojic) == {"s2": "80762784"}
    assert bojic.display_name == "Ljubiša Bojić"
    assert ext(researcher_at(papers["2312.09402"], 3)) == {"s2": "2876527"}  # "D. Culibrk"


@pytest.mark.django_db
def test_extra_byline_author_stays_unmatched(sources, papers, clean_cache):
    match_papers([papers["2302.01339"].pk])
    paper = papers["2302.01339"]
    assert ext(researcher_at(paper, 1)) == {"s2": "3687664"}
    assert ext(researcher_at(paper, 2)) == {"s2": "2037121171"}
    assert ext(researcher_at(paper, 3)) == {"s2": "8910659"}
    assert researcher_at(paper, 4) is None
    assert PaperMatchState.objects.get(paper=paper).matched_authors == 3


@pytest.mark.django_db
def test_paper_only_openalex_knows_is_matched_through_openalex(sources, papers, clean_cache):
    paper = papers["2108.04680"]
    result = match_papers([paper.pk])
    assert result.matched == 1
    paper.refresh_from_db()
    assert paper.semantic_scholar_id is None and paper.openalex_id == "W3188841554"
    assert paper.cited_by_count == 2
    roberts = researcher_at(paper, 1)
    assert ext(roberts) == {"openalex": "A5009341822", "orcid": "0000-0001-7718-3181"}
    # Figures come from the recorded OpenAlex author record, with source and date.
    recorded = load("openalex/author_A5009341822.json")
    assert roberts.figures_source == "openalex"
    assert roberts.h_index == recorded["summary_stats"]["h_index"]
    assert roberts.citation_count == recorded["cited_by_count"]
    assert roberts.works_count == recorded["works_count"]
    assert roberts.figures_updated_at is not None
    state = PaperMatchState.objects.get(paper=paper)
    assert (state.status, state.s2_status, state.openalex_status) == ("matched", "unknown", "found")
    assert state.next_attempt_at is not None  # S2 is asked again later
    bangor = Institution.objects.get(ror_id="006jb1a24")
    assert bangor.name == "Bangor University" and bangor.openalex_id == "I161548249"
    assert AuthorshipInstitution.objects.filter(institution=bangor, paper=paper).count() == 5
    assert (bangor.paper_count, bangor.researcher_count) == (1, 5)
    # ROR does not know this id in the recordings: asked once, marked, not guessed.
    assert bangor.ror_status == "unknown" and bangor.ror_checked_at is not None


@pytest.mark.django_db
def test_paper_unknown_to_both_is_recorded_and_left_alone(sources, papers, clean_cache):
    paper = papers["2401.99999"]
    result = match_papers([paper.pk])
    assert (result.matched, result.unknown) == (0, 1)
    state = PaperMatchState.objects.get(paper=paper)
    assert (state.status, state.s2_status, state.openalex_status) == (
        "unknown",
        "unknown",
        "unknown",
    )
    assert state.next_attempt_at > state.last_attempt_at
    assert not Authorship.objects.filter(paper=paper, researcher__isnull=False).exists()
    paper.refresh_from_db()
    assert paper.semantic_scholar_id is None and paper.cited_by_count is None


@pytest.mark.django_db
def test_same_name_records_stay_apart(sources, papers, clean_cache):
    match_papers([papers["2211.11461"].pk, papers["2304.06333"].pk])
    first = researcher_at(papers["2211.11461"], 3)
    second = researcher_at(papers["2304.06333"], 3)
    assert first.pk != second.pk
    assert first.name_key == second.name_key == "pedro g ferreira"
    assert Researcher.objects.filter(name_key="pedro g ferreira").count() == 2
    # The co-authors S2 identifies once are one record across both papers.
    assert researcher_at(papers["2211.11461"], 1) == researcher_at(papers["2304.06333"], 1)


@pytest.mark.django_db
def test_one_openalex_id_across_two_s2_ids_keeps_records_apart(sources, papers, clean_cache):
    earlier = Researcher.objects.create(display_name="Hugo Touvron", name_key="hugo touvron")
    ResearcherExternalId.objects.create(researcher=earlier, source="s2", value="999999")
    ResearcherExternalId.objects.create(researcher=earlier, source="openalex", value="A5032644449")
    match_papers([papers["2302.13971"].pk])
    touvron = researcher_at(papers["2302.13971"], 1)
    assert touvron.pk != earlier.pk
    assert ext(touvron) == {"s2": "2113243762", "orcid": "0000-0003-1678-392X"}
    assert ext(earlier) == {"s2": "999999", "openalex": "A5032644449"}
    conflict = IdentityConflict.objects.get()
    assert conflict.kind == IdentityConflict.S2_SPLIT
    assert (conflict.researcher, conflict.other_researcher) == (touvron, earlier)
    assert (conflict.s2_id, conflict.openalex_id) == ("2113243762", "A5032644449")
    assert conflict.paper == papers["2302.13971"] and conflict.position == 1


@pytest.mark.django_db
def test_one_s2_id_across_two_openalex_ids_is_recorded(sources, papers, clean_cache):
    earlier = Researcher.objects.create(display_name="Hugo Touvron", name_key="hugo touvron")
    ResearcherExternalId.objects.create(researcher=earlier, source="s2", value="2113243762")
    ResearcherExternalId.objects.create(researcher=earlier, source="openalex", value="A5000000001")
    match_papers([papers["2302.13971"].pk])
    assert researcher_at(papers["2302.13971"], 1) == earlier
    assert ext(earlier)["openalex"] == "A5000000001"
    assert not ResearcherExternalId.objects.filter(value="A5032644449").exists()
    conflict = IdentityConflict.objects.get()
    assert conflict.kind == IdentityConflict.OPENALEX_SPLIT
    assert conflict.researcher == earlier and conflict.other_researcher is None


@pytest.mark.django_db
def test_rerun_changes_nothing(sources, papers, clean_cache):
    ids = [p.pk for p in papers.values()]
    first = match_papers(ids)
    snapshot = (
        list(Authorship.objects.order_by("pk").values_list("pk", "researcher_id")),
        Researcher.objects.count(),
        ResearcherExternalId.objects.count(),
        IdentityConflict.objects.count(),
        AuthorshipInstitution.objects.count(),
        Institution.objects.count(),
        list(
            Paper.objects.order_by("pk").values_list(
                "semantic_scholar_id", "openalex_id", "cited_by_count"
            )
        ),
    )
    second = match_papers(ids)
    assert first.authorships_attached > 40 and second.authorships_attached == 0
    assert second.researchers_created == 0
    assert snapshot == (
        list(Authorship.objects.order_by("pk").values_list("pk", "researcher_id")),
        Researcher.objects.count(),
        ResearcherExternalId.objects.count(),
        IdentityConflict.objects.count(),
        AuthorshipInstitution.objects.count(),
        Institution.objects.count(),
        list(
            Paper.objects.order_by("pk").values_list(
                "semantic_scholar_id", "openalex_id", "cited_by_count"
            )
        ),
    )
    assert set(PaperMatchState.objects.values_list("attempts", flat=True)) == {2}


@pytest.mark.django_db
def test_unreachable_service_leaves_everything_as_it_was(sources, papers, settings, clean_cache):
    # A port nothing listens on: connection refused at once, retried, then given up.
    settings.SEMANTIC_SCHOLAR_API_URL = "http://127.0.0.1:9/s2"
    run, result = match_run([p.pk for p in papers.values()], trigger="test")
    assert result.failed == len(papers) and result.matched == 0
    assert run.status == MatchRun.UNREACHABLE
    assert "Semantic Scholar" in run.message and "unreachable" in run.message
    assert not Authorship.objects.filter(researcher__isnull=False).exists()
    assert not Researcher.objects.exists()
    assert not Paper.objects.filter(semantic_scholar_id__isnull=False).exists()
    states = PaperMatchState.objects.all()
    # The first batch failed and the run stopped: those papers say why, and will be retried.
    assert states.count() == len(papers)
    for state in states:
        assert state.status == "failed" and state.s2_status == "error"
        assert "Nothing was changed" in state.last_error
        assert state.next_attempt_at > state.last_attempt_at


@pytest.mark.django_db
def test_papers_to_match_goes_newest_first_then_due_retries(sources, papers, clean_cache):
    newest_first = sorted(papers.values(), key=lambda p: p.published, reverse=True)
    assert papers_to_match(limit=3) == [p.pk for p in newest_first[:3]]
    match_papers([p.pk for p in newest_first[:3]])
    assert papers_to_match(limit=3) == [p.pk for p in newest_first[3:6]]
    since = datetime(2024, 1, 9, tzinfo=UTC)
    assert set(papers_to_match(limit=50, since=since)) == {
        p.pk
        for p in papers.values()
        if p.published >= since and not PaperMatchState.objects.filter(paper=p).exists()
    }
    # Every paper tried once: nothing is due until the retry time of the unknown ones.
    match_papers([p.pk for p in papers.values()])
    assert papers_to_match(limit=50) == []
    later = datetime(2100, 1, 1, tzinfo=UTC)
    due = papers_to_match(limit=50, now=later)
    retried = set(
        PaperMatchState.objects.filter(next_attempt_at__isnull=False).values_list(
            "paper_id", flat=True
        )
    )
    assert set(due) == retried and papers["2401.99999"].pk in retried
    assert papers["2302.13971"].pk not in retried


@pytest.mark.django_db
def test_ids_on_a_merged_record_lead_to_the_survivor(sources, papers, clean_cache):
    survivor = Researcher.objects.create(display_name="Hugo Touvron")
    merged = Researcher.objects.create(display_name="H. Touvron", merged_into=survivor)
    ResearcherExternalId.objects.create(researcher=merged, source="s2", value="2113243762")
    match_papers([papers["2302.13971"].pk])
    assert researcher_at(papers["2302.13971"], 1) == survivor
    assert not IdentityConflict.objects.exists()


@pytest.mark.django_db
def test_abbreviated_display_name_is_replaced_by_a_full_one(sources, papers, clean_cache):
    earlier = Researcher.objects.create(display_name="F. Liwicki", name_key="f liwicki")
    ResearcherExternalId.objects.create(researcher=earlier, source="s2", value="80342407")
    match_papers([papers["2205.00965"].pk])
    earlier.refresh_from_db()
    assert (earlier.display_name, earlier.name_key, earlier.slug) == (
        "Foteini Liwicki",
        "foteini liwicki",
        "foteini-liwicki",
    )


@pytest.mark.django_db
def test_entries_that_name_no_person_are_never_linked(sources, papers, clean_cache):
    """arXiv bylines end with "et al" or name a collaboration; neither is a researcher, and a
    link an earlier matching made to one is undone."""
    paper = papers["1209.5246"]
    stale = Researcher.objects.create(display_name="et al")
    Authorship.objects.create(paper=paper, position=4, name="et al", researcher=stale)
    Authorship.objects.create(paper=paper, position=5, name="PHENIX Collaboration")
    match_papers([paper.pk])
    assert [researcher_at(paper, p) is not None for p in range(1, 6)] == [
        True,
        True,
        True,
        False,
        False,
    ]
    assert not Researcher.objects.filter(display_name__icontains="collaboration").exists()
    assert PaperMatchState.objects.get(paper=paper).matched_authors == 3


@pytest.mark.django_db
def test_a_source_record_that_cannot_be_the_paper_is_set_aside(sources, paper_factory, clean_cache):
    """A byline of 35 (the real author list of a recorded S2 paper,
    aeea0e8df12a3ffc1feca00fbf508a82a6917c95) given an arXiv id whose recorded records list
    3 authors: those records are another paper's, so none of their ids is used."""
    big = next(
        p
        for a in load("semanticscholar/author_batch_full_fields.json")
        for p in (a or {}).get("papers") or []
        if p.get("paperId") == "aeea0e8df12a3ffc1feca00fbf508a82a6917c95"
    )
    byline = [a["name"] for a in big["authors"]]
    paper = paper_factory(arxiv_id="2205.00965", authors=byline)
    result = match_papers([paper.pk])
    assert result.failed == 0 and result.authorships_attached == 0
    assert not Authorship.objects.filter(paper=paper, researcher__isnull=False).exists()
    assert not Researcher.objects.exists() and not ResearcherExternalId.objects.exists()
    paper.refresh_from_db()
    assert paper.semantic_scholar_id is None and paper.openalex_id is None
    state = PaperMatchState.objects.get(paper=paper)
    assert state.s2_status == PaperMatchState.MISMATCH
    assert "lists 3 authors, the byline 35" in state.mismatch
    # Asked again later, like a paper the sources do not know.
    assert state.next_attempt_at is not None
