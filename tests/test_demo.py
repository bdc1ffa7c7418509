"""`python manage.py demo`: offline, the site ends with real researchers, matched by production's
matching from recorded answers served on 127.0.0.1; a rerun changes nothing."""

from __future__ import annotations

import json
import re
from datetime import date
from io import StringIO

import httpx
import pytest
from django.conf import settings as django_settings
from django.contrib.sites.models import Site
from django.core import mail
from django.core.management import call_command
from drf_spectacular.settings import spectacular_settings

from institutions.models import Institution
from papers.models import Authorship, Citation, CitationCoverage, Paper, PaperEmbedding
from papers.nonpersons import PERSON, list_kinds
from researchers.models import (
    CurationEntry,
    PaperMatchState,
    Researcher,
    ResearcherExternalId,
)
from wovepaper.demo.identities import recorded_arxiv_ids
from wovepaper.demo.replay import Recordings, replaying


def _state() -> dict:
    """Everything the demo writes that a rerun could change."""
    return {
        "papers": sorted(Paper.objects.values_list("arxiv_id", "source_hash")),
        "authorships": sorted(
            Authorship.objects.values_list("paper_id", "position", "researcher_id")
        ),
        "researchers": sorted(
            Researcher.objects.values_list(
                "pk",
                "display_name",
                "h_index",
                "citation_count",
                "works_count",
                "figures_source",
                "figures_updated_at",
                "paper_count",
                "coauthors",
            )
        ),
        "ids": sorted(ResearcherExternalId.objects.values_list("researcher_id", "source", "value")),
        "institutions": sorted(Institution.objects.values_list("pk", "ror_id", "paper_count")),
        "states": sorted(PaperMatchState.objects.values_list("paper_id", "status", "attempts")),
        "citations": sorted(
            Citation.objects.values_list("citing_paper_id", "cited_key", "source", "cited_paper_id")
        ),
        "coverage": sorted(
            CitationCoverage.objects.values_list("paper_id", "source", "references_listed")
        ),
    }


@pytest.mark.django_db(transaction=True)
def test_demo_prepares_real_researchers_offline_and_a_rerun_changes_nothing(
    settings, client, monkeypatch
):
    # Nothing outside this machine: the live services' addresses lead nowhere.
    settings.SEMANTIC_SCHOLAR_API_URL = "http://127.0.0.1:9/s2"
    settings.OPENALEX_API_URL = "http://127.0.0.1:9/openalex"
    settings.ROR_API_URL = "http://127.0.0.1:9/ror"
    recordings = Recordings()
    out = StringIO()
    # What the demo sets from the port it serves on goes back as it was after the test.
    settings.SITE_URL = settings.SITE_URL
    monkeypatch.delenv("SITE_URL", raising=False)
    try:
        call_command(
            "demo", no_serve=True, addrport="127.0.0.1:8123", stdout=out, stderr=StringIO()
        )
        # Canonical links, e-mails and the API's "Try it out" point where the demo serves.
        assert django_settings.SITE_URL == "http://127.0.0.1:8123"
        servers = client.get("/openapi.json").json()["servers"]
        assert servers == [{"url": "http://127.0.0.1:8123"}]
        assert Site.objects.get_current().domain == "127.0.0.1:8123"
    finally:
        spectacular_settings.clear_patches()
    output = out.getvalue()
    assert "Demo data ready." in output
    assert "http://127.0.0.1:8123/" in output
    # The open identity-links file that /llms.txt lists is there.
    assert client.get("/data/identity-links.jsonl.gz").status_code == 200
    # A misspelt search of the demo's papers is offered the word they write.
    misspelt = client.get("/search", {"q": "trasnformer"}).content.decode()
    assert 'Did you mean <a href="/search?q=transformer"><b>transformer</b></a>?' in misspelt
    # The sample is left for live matching, which is out of reach: the demo says so once, as
    # what it is (offline by design), not as failures.
    assert "Live matching of the rest of the sample is skipped" in output
    assert "unreachable" not in output and "Errno" not in output
    # The recordings hold no ROR records on purpose: said as a fact, not as an HTTP failure.
    assert "HTTP 503" not in output and "no ROR records" in output
    assert "AlwaysEagerIgnored" not in output and "identity conflicts recorded" not in output

    recorded = recorded_arxiv_ids(recordings)
    assert len(recorded) == 353
    # Citations as recorded: OpenAlex's references of 19 recorded works, and the 243 papers
    # here that Semantic Scholar lists as citing "Computing Machinery and Intelligence".
    assert "Citations from recorded answers" in output
    assert CitationCoverage.objects.filter(source="openalex").count() == 19
    turing = Citation.objects.filter(source="s2", cited_doi="10.1093/mind/lix.236.433")
    assert turing.count() == 243
    assert PaperMatchState.objects.count() == len(recorded)
    assert PaperMatchState.objects.filter(status=PaperMatchState.MATCHED).count() == 353
    assert Paper.objects.count() == 3200 + 353
    # Every paper has its vector: from the shipped file, or embedded here if newer than it.
    assert "vectors from" in output and "demo-embeddings.npz" in output
    # (a paper whose text changed since the file was made is embedded here, and said so)
    assert "none to embed" in output or "; 0 still pending" in output
    assert PaperEmbedding.objects.count() == Paper.objects.count()

    live = Researcher.objects.filter(merged_into__isnull=True)
    assert live.count() >= 1500
    # Every researcher is a real identity: each holds an id the recordings gave.
    assert not live.filter(external_ids__isnull=True).exists()
    recorded_s2 = {
        a["authorId"]: a["name"]
        for p in recordings.s2_papers.values()
        for a in p["answer"]["authors"]
        if a.get("authorId")
    }
    held_s2 = set(ResearcherExternalId.objects.filter(source="s2").values_list("value", flat=True))
    # Every Semantic Scholar author id is held, but for the entries that name no person (the
    # source's parsing slips, such as "The Alan Turing Institute"), which are nobody's record.
    assert held_s2 <= set(recorded_s2)
    left_out = [recorded_s2[i] for i in set(recorded_s2) - held_s2]
    assert "The Alan Turing Institute" in left_out
    # Nor is any entry papers.nonpersons reads as no person in its list, some only in its
    # context ("Socorro, Nm" after an observatory: rule 5).
    in_context = {
        a["authorId"]
        for p in recordings.s2_papers.values()
        for a, kind in zip(
            p["answer"]["authors"],
            list_kinds([a.get("name") or "" for a in p["answer"]["authors"]]),
            strict=True,
        )
        if kind != PERSON and a.get("authorId")
    }
    assert held_s2.isdisjoint(in_context)
    assert {"A. Building", "UK.", "Astronomy", "Socorro", "Nm", "Usa"} <= set(left_out)
    # Figures only where a recorded author record gave them, as of the day it was recorded.
    with_figures = live.exclude(figures_source="")
    # 17: the 18th was "A. Building" (h-index 5), a piece of an address, no one's record now.
    assert with_figures.count() == 17
    assert not live.filter(display_name="A. Building").exists()
    days = recordings.figures_recorded_on()
    for r in with_figures.prefetch_related("external_ids"):
        held = {(x.source, x.value) for x in r.external_ids.all()}
        (key,) = [k for k in held if k[0] == r.figures_source]
        assert r.figures_updated_at.date() == days[key], r
    # Each source's own record, where one was recorded, is as of its recording day too.
    fetched = ResearcherExternalId.objects.exclude(fetched_at=None)
    assert fetched.count() == 17  # as above: "A. Building" no more
    for ext in fetched:
        assert ext.fetched_at.date() == days[(ext.source, ext.value)], ext
    # Author positions, co-authors, fields and same-name records come out of the matching.
    assert live.filter(position_basis__gt=0).count() >= 1000
    assert live.exclude(coauthors=[]).count() >= 1000
    # Fields come from arXiv's categories, known (from readnext's copy) for 25 of the papers.
    assert len(recordings.arxiv_categories) == 25
    with_categories = Paper.objects.filter(arxiv_id__in=recorded).exclude(categories="")
    assert with_categories.count() == 25
    assert live.exclude(field_counts={}).count() >= 100
    attention = Paper.objects.get(arxiv_id="1706.03762")
    assert attention.categories.split() == ["cs.CL", "cs.LG"]
    # No source gave its day: the month its identifier names, and no paper of the demo undated.
    assert (attention.published.date(), attention.published_precision) == (
        date(2017, 6, 1),
        "month",
    )
    assert not Paper.objects.filter(published__isnull=True).exists()
    # A count is as of the day its source answered (the recording's), never the load's.
    recorded_on = recordings.citation_counts_recorded_on()
    counted = Paper.objects.exclude(cited_by_updated_at=None)
    assert counted.count() > 250
    assert [
        p.arxiv_id
        for p in counted
        if p.cited_by_updated_at.date() != recorded_on.get((p.cited_by_source, p.arxiv_id))
    ] == []
    twins = {k for k in live.values_list("name_key", flat=True) if " " in k}
    twins = [k for k in twins if live.filter(name_key=k).count() > 1]
    assert {"mirco musolesi", "ilya sutskever", "tomas mikolov"} <= set(twins)
    # One person, one record: the two sources' ids on Attention's byline slot of Jakob
    # Uszkoreit (and of Noam Shazeer) were on two records; the identity rule merged each pair
    # after matching, with no actor and the evidence in the note.
    assert "jakob uszkoreit" not in twins
    for s2_id, openalex_id in (("39328010", "A5022416424"), ("1846258", "A5021878400")):
        record = live.get(external_ids__source="s2", external_ids__value=s2_id)
        assert record.external_ids.filter(source="openalex", value=openalex_id).exists()
    merges = CurationEntry.objects.filter(action=CurationEntry.MERGE)
    assert merges.count() == 2 and not merges.exclude(actor=None).exists()
    assert Institution.objects.exclude(ror_id=None).count() == 29
    google = Institution.objects.get(ror_id="00njsd438")  # on four of the recorded works
    assert google.paper_count == 4
    page = client.get(google.get_absolute_url()).content.decode()
    assert "ror.org/00njsd438" in page

    # A researcher page: figures with their source and date, co-authors, author positions.
    sommerville = live.get(external_ids__source="s2", external_ids__value="1711844")
    page = client.get(sommerville.get_absolute_url()).content.decode()
    assert "57</strong> h-index" in page
    # The headline figures and Semantic Scholar's own record, side by side, both dated.
    assert page.count("as of 1 Dec 2023") >= 2
    assert "Semantic Scholar</a>, as of 1 Dec 2023" in page
    assert "Co-authors" in page or "coauthors" in page
    coauthor = sommerville.coauthors[0]
    assert f"/researchers/{coauthor['id']}" in page
    # An OpenAlex record (openalex-research-rag's answers): its figures, as of the day fetched.
    shen = live.get(external_ids__source="openalex", external_ids__value="A5006294869")
    page = client.get(shen.get_absolute_url()).content.decode()
    assert "126</strong> h-index" in page and "OpenAlex</a>, as of 24 Jun 2026" in page
    assert "Twins: Revisiting the Design of Spatial Attention" in page
    # A same-name record: its page lists the other record with that name.
    musolesi = live.filter(name_key="mirco musolesi").order_by("pk")
    first, second = list(musolesi)
    page = client.get(first.get_absolute_url()).content.decode()
    assert "Same name" in page and second.get_absolute_url() in page
    # A paper no arXiv record was found for says what is unknown instead of guessing it.
    llama = Paper.objects.get(arxiv_id="2302.13971")
    assert llama.published_month_only and llama.abstract == "" and llama.categories == ""
    page = client.get(llama.get_absolute_url()).content.decode()
    assert "record of this paper is not held here" in page and "Not known here." in page
    assert '<time datetime="2023-02">February 2023</time>' in page
    assert "arXiv lists no abstract" not in page
    assert llama.record_source in ("s2", "openalex")
    assert f"Title and authors as {llama.record_source_name} lists them" in page
    # A source's byline is the names printed on the paper, not the names of the identities the
    # source gave the authorships to: OpenAlex gives word2vec's "Jeffrey Dean" to "Jay B. Dean".
    word2vec = Paper.objects.get(arxiv_id="1301.3781")
    assert word2vec.record_source == "openalex" and "Jeffrey Dean" in word2vec.authors
    assert not Authorship.objects.filter(name="Jay B. Dean").exists()
    dean = Authorship.objects.select_related("researcher").get(paper=word2vec, name="Jeffrey Dean")
    assert dean.researcher is None or "Jay" not in dean.researcher.display_name
    arxiv_own = Paper.objects.exclude(arxiv_id__in=recorded).first()
    assert arxiv_own is not None and arxiv_own.record_source is None
    # A new account follows a researcher and reads their papers in its feed.
    password = "a-demo-reader-passphrase-7"
    signup = client.post(
        "/accounts/signup/",
        {"email": "reader@example.org", "password1": password, "password2": password},
    )
    assert signup["Location"] == "/accounts/confirm-email/"
    link = re.search(r"https?://[^/\s]+(/accounts/confirm-email/\S+/)", mail.outbox[-1].body)[1]
    assert client.post(link)["Location"] == "/chat"  # a new reader lands on the chat
    assert client.post("/onboarding/skip").status_code == 302
    follow = client.post(f"/following/researchers/{sommerville.pk}/follow", {"next": "/following"})
    assert follow.status_code == 302
    feed = client.get("/following").content.decode()
    assert "Large-scale complex IT systems" in feed  # arXiv 1109.3444, by Sommerville et al.
    client.logout()
    # The curators' queue offers them; a curator (superuser) sees it.
    from django.contrib.auth import get_user_model

    curator = get_user_model().objects.create_superuser("curator", "c@example.org", "pw-demo-1")
    client.force_login(curator)
    queue = client.get("/admin/researchers/researcher/curation/?prefix=mirco").content.decode()
    assert "Mirco Musolesi" in queue

    # A rerun changes nothing.
    before = _state()
    rerun = StringIO()
    call_command("demo", no_serve=True, stdout=rerun, stderr=StringIO())
    assert "Recorded papers: 353 in place, all matched on an earlier run; nothing to do" in (
        rerun.getvalue()
    )
    assert _state() == before


def test_replay_answers_only_from_recordings():
    recordings = Recordings()
    s2_author = next(iter(recordings.s2_authors))
    with replaying(recordings) as served:
        from django.conf import settings

        s2 = settings.SEMANTIC_SCHOLAR_API_URL
        papers = httpx.post(
            f"{s2}/paper/batch", json={"ids": ["ARXIV:2302.13971", "ARXIV:0704.0001"]}
        )
        authors = httpx.post(f"{s2}/author/batch", json={"ids": [s2_author, "0"]})
        works = httpx.get(
            f"{settings.OPENALEX_API_URL}/works",
            params={"filter": "doi:10.48550/arxiv.2302.13971|10.48550/arxiv.0704.0001"},
        )
        ror = httpx.get(f"{settings.ROR_API_URL}/organizations/006jb1a24")
    assert served is recordings
    first, unknown = papers.json()
    assert first == recordings.s2_papers["2302.13971"]["answer"] and unknown is None
    assert authors.json() == [recordings.s2_authors[s2_author]["answer"], None]
    assert [w["id"] for w in works.json()["results"]] == ["https://openalex.org/W4322718191"]
    assert works.json()["meta"]["count"] == 1
    assert ror.status_code == 503
    assert json.loads(ror.content)["errors"]
