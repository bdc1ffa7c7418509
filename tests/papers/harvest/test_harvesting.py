"""Harvest windows end to end: real HTTP from recorded pages into the real database."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import httpx
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from lxml import etree

from papers.harvest import oai
from papers.harvest.client import ArxivOAIClient, IncompleteList
from papers.harvest.runs import (
    HarvestLocked,
    harvest_lock,
    harvest_next_from,
    harvest_page_ingest,
    harvest_run_create,
    harvest_window,
)
from papers.ingest.textmode import text_mode_to_unicode
from papers.models import Authorship, HarvestRun, Paper, PaperCategory, RejectedRecord
from tests.papers.conftest import (
    ARXIV_PAGE_1,
    ARXIV_PAGE_2,
    ARXIV_PAGE_3,
    CURRENT_1,
    CURRENT_2,
    CURRENT_TOKEN,
    RAW_PAGE,
    oai_bytes,
    requested,
    serve,
    serve_arxiv_chain,
)

OAI = "http://www.openarchives.org/OAI/2.0/"
ARXIV_WINDOW = {"metadataPrefix": "arXiv", "set": "physics", "from": "2007-05-23"}
CHAIN_IDS = 2002  # 1,000 + 1,000 + 2 records, all distinct
QUANT_PH = {"metadataPrefix": "arXivRaw", "set": "physics:quant-ph"}


def database_state():
    """Everything the harvest writes, without surrogate keys or timestamps."""
    papers = sorted(
        Paper.objects.values_list(
            "arxiv_id",
            "version",
            "title",
            "abstract",
            "authors",
            "categories",
            "primary_category",
            "published",
            "updated",
            "doi",
            "journal_ref",
            "comments",
            "report_no",
            "license",
            "submitter",
            "slug",
            "is_withdrawn",
            "is_deleted",
            "source_hash",
        )
    )
    authorships = sorted(
        Authorship.objects.values_list(
            "paper__arxiv_id", "position", "name", "keyname", "forenames", "suffix", "affiliation"
        )
    )
    categories = sorted(
        PaperCategory.objects.values_list("paper__arxiv_id", "code", "is_primary", "published")
    )
    return papers, authorships, categories


def run_arxiv_chain(**kwargs) -> HarvestRun:
    return harvest_window(
        set_spec="physics", metadata_prefix="arXiv", from_date=date(2007, 5, 23), **kwargs
    )


def test_multi_page_harvest_follows_real_tokens_to_the_empty_last_one(oai_url, httpserver, db):
    serve_arxiv_chain(httpserver, window=ARXIV_WINDOW)
    run = run_arxiv_chain()
    assert run.status == HarvestRun.Status.SUCCEEDED
    assert (run.pages, run.created, run.updated, run.unchanged, run.rejected) == (
        3,
        CHAIN_IDS,
        0,
        0,
        0,
    )
    assert run.resumption_token == ""
    assert run.response_date == datetime(2013, 5, 24, 20, 43, 21, tzinfo=UTC)
    assert [q.get("resumptionToken") for q in requested(httpserver)] == [
        None,
        "436115|5001",
        "436115|406001",
    ]
    assert requested(httpserver)[0] == {"verb": "ListRecords", **ARXIV_WINDOW}
    assert Paper.objects.count() == CHAIN_IDS
    # Legacy pages come sorted by id, not datestamp: no datestamp checkpoint to restart from.
    assert run.checkpoint_datestamp is None

    paper = Paper.objects.get(arxiv_id="0704.4001")
    assert paper.title == "Warping and Supersymmetry Breaking"
    assert paper.categories == "hep-th" and paper.primary_category == "hep-th"
    assert paper.published == datetime(2007, 4, 30, tzinfo=UTC)
    assert paper.updated == date(2008, 1, 28)
    assert paper.report_no == "RUNHETC-07-05"
    assert paper.doi == "" and paper.journal_ref == "" and paper.license == ""
    assert paper.version == 1
    assert paper.slug == "warping-and-supersymmetry-breaking"
    assert paper.authors == "Michael R. Douglas, Jessie Shelton, Gonzalo Torroba"
    assert list(paper.authorships.values_list("position", "name", "keyname", "forenames")) == [
        (1, "Michael R. Douglas", "Douglas", "Michael R."),
        (2, "Jessie Shelton", "Shelton", "Jessie"),
        (3, "Gonzalo Torroba", "Torroba", "Gonzalo"),
    ]
    kochen = Paper.objects.get(arxiv_id="1412.8544")  # from the third page
    assert list(kochen.authorships.values_list("name", "affiliation")) == [
        ("Sander Uijlen", "Radboud Universiteit"),
        ("Bas Westerbaan", "Radboud Universiteit"),
    ]


# Every TeX remnant in the names of the two real `arXiv` pages, decoded by hand. TeX written
# without a space ("S\\lawianowski") must not lose the name to an "unknown macro".
TEX_NAMES = {
    "Y\\ilmaz": "Yılmaz",
    "S\\lawianowski": "Sławianowski",
    "Pila\\vr": "Pilař",
    "Lefran\\ccois": "Lefrançois",
    "Go\\lubowska": "Gołubowska",
    "Garc\\ia": "Garcıa",
    "Garc\\ia-Ripoll": "Garcıa-Ripoll",
    "Ar\\ik": "Arık",
    "Ak\\incı": "Akıncı",
}


def _untex(text: str | None) -> str:
    text = (text or "").strip()
    return TEX_NAMES[text] if "\\" in text else text


@pytest.mark.parametrize("name", [ARXIV_PAGE_1, ARXIV_PAGE_2])
def test_every_harvested_paper_matches_its_xml(oai_url, httpserver, db, name):
    serve(httpserver, {"verb": "ListRecords", **ARXIV_WINDOW}, oai_bytes(name))
    next_token = "436115|5001" if name == ARXIV_PAGE_1 else "436115|406001"
    serve(
        httpserver, {"verb": "ListRecords", "resumptionToken": next_token}, oai_bytes(ARXIV_PAGE_3)
    )
    run_arxiv_chain()
    papers = {p.arxiv_id: p for p in Paper.objects.all()}
    assert len(papers) == 1002
    authors = {}
    for paper_id, name_ in Authorship.objects.values_list("paper__arxiv_id", "name"):
        authors.setdefault(paper_id, []).append(name_)
    ns = {"o": OAI, "a": "http://arxiv.org/OAI/arXiv/"}
    records = etree.fromstring(oai_bytes(name)).findall(".//o:record", ns)
    assert len(records) == 1000
    for rec in records:
        meta = rec.find(".//a:arXiv", ns)
        paper = papers[meta.findtext("a:id", namespaces=ns)]

        def text(tag, meta=meta):
            return " ".join((meta.findtext(f"a:{tag}", namespaces=ns) or "").split())

        # Text-mode TeX is read as the Unicode it prints as (papers.ingest.textmode).
        assert paper.title == text_mode_to_unicode(text("title"))
        assert paper.categories == text("categories")
        assert paper.primary_category == text("categories").split()[0]
        assert paper.doi == text("doi")
        assert paper.journal_ref == text("journal-ref")
        assert paper.comments == text("comments")
        assert paper.report_no == text("report-no")
        assert paper.license == text("license")
        assert paper.updated.isoformat() == rec.findtext(".//o:datestamp", namespaces=ns)
        assert paper.published.date().isoformat() == text("created")
        assert " ".join(paper.abstract.split()) == text_mode_to_unicode(text("abstract"))
        expected = [
            " ".join(
                " ".join(
                    filter(
                        None,
                        [
                            _untex(a.findtext("a:forenames", namespaces=ns)),
                            _untex(a.findtext("a:keyname", namespaces=ns)),
                            _untex(a.findtext("a:suffix", namespaces=ns)),
                        ],
                    )
                ).split()
            )
            for a in meta.findall("a:authors/a:author", ns)
        ]
        # Notes are no authors (papers.nonpersons): "for the ATLAS Collaboration" and what
        # follows it, also after a name ("R. Preghenella for the ALICE Collaboration"), and
        # "et al." after a name ("H. O. Back et al.").
        notes = [i for i, n in enumerate(expected) if n.lower().startswith("for the ")]
        expected = [
            re.sub(r"( for the .*Collaboration|,? et al\.?)$", "", n)
            for n in expected[: notes[0] if notes else None]
        ]
        assert authors[paper.arxiv_id] == expected


def test_arxiv_raw_page_gives_versions_v1_dates_and_affiliations(oai_url, httpserver, db):
    # The recorded page is the 47th of its list: served as the whole list, its token says so.
    body = oai_bytes(RAW_PAGE).replace(
        b"<resumptionToken completeListSize='907096' cursor='46000'>496549|47001<",
        b"<resumptionToken completeListSize='47000' cursor='46000'><",
    )
    serve(httpserver, {"verb": "ListRecords", **QUANT_PH}, body)
    run = harvest_window(set_spec="physics:quant-ph", metadata_prefix="arXivRaw")
    assert run.status == HarvestRun.Status.SUCCEEDED and run.created == 1000
    paper = Paper.objects.get(arxiv_id="0801.3674")
    assert paper.version == 4
    assert paper.published == datetime(2008, 1, 23, 21, 13, 53, tzinfo=UTC)
    assert paper.updated == date(2008, 11, 26)
    assert paper.submitter == "Robert Brandenberger"
    assert paper.doi == "10.1103/PhysRevD.78.083502"
    assert paper.categories == "hep-th astro-ph gr-qc hep-ph"
    assert list(paper.authorships.values_list("name", "affiliation")) == [
        ("Robert H. Brandenberger", "McGill"),
        ("Keshav Dasgupta", "McGill"),
        ("Anne-Christine Davis", "DAMTP, Cambridge"),
    ]
    assert set(PaperCategory.objects.filter(paper=paper).values_list("code", "is_primary")) == {
        ("hep-th", True),
        ("astro-ph", False),
        ("gr-qc", False),
        ("hep-ph", False),
    }
    tex = Paper.objects.get(authors__contains="Jean-Claude")
    assert "Jean-Claude Léon" in tex.authors
    assert tex.authorships.get(position=3).name == "Jean-Claude Léon"
    # Every v1 date and version number against the XML.
    ns = {"o": OAI, "r": "http://arxiv.org/OAI/arXivRaw/"}
    for meta in etree.fromstring(oai_bytes(RAW_PAGE)).iterfind(".//r:arXivRaw", ns):
        versions = meta.findall("r:version", ns)
        published, version = Paper.objects.values_list("published", "version").get(
            arxiv_id=meta.findtext("r:id", namespaces=ns)
        )
        assert version == max(int(v.get("version")[1:]) for v in versions)
        first = next(v for v in versions if v.get("version") == "v1")
        assert (
            published.strftime("%a, %-d %b %Y %H:%M:%S GMT")
            == first.findtext("r:date", namespaces=ns).strip()
        )


def test_rerun_is_idempotent_and_incremental_starts_from_last_response_date(
    oai_url, httpserver, db
):
    serve_arxiv_chain(httpserver, window=ARXIV_WINDOW)
    run_arxiv_chain()
    before = database_state()
    again = run_arxiv_chain()
    assert (again.created, again.updated, again.unchanged) == (0, 0, CHAIN_IDS)
    assert database_state() == before
    assert harvest_next_from(set_spec="physics", metadata_prefix="arXiv") == date(2013, 5, 24)
    httpserver.clear()
    # A bounded backfill window does not move the incremental cursor.
    serve(
        httpserver,
        {
            "verb": "ListRecords",
            "metadataPrefix": "arXiv",
            "set": "physics",
            "from": "2013-05-01",
            "until": "2013-05-02",
        },
        oai_bytes("current_error_noRecordsMatch.xml"),
    )
    backfill = harvest_window(
        set_spec="physics",
        metadata_prefix="arXiv",
        from_date=date(2013, 5, 1),
        until_date=date(2013, 5, 2),
    )
    assert backfill.status == HarvestRun.Status.SUCCEEDED
    assert harvest_next_from(set_spec="physics", metadata_prefix="arXiv") == date(2013, 5, 24)
    httpserver.clear()
    serve(
        httpserver,
        {"verb": "ListRecords", "metadataPrefix": "arXiv", "set": "physics", "from": "2013-05-24"},
        oai_bytes("current_error_noRecordsMatch.xml"),
    )
    incremental = harvest_window(set_spec="physics", metadata_prefix="arXiv", incremental=True)
    assert incremental.status == HarvestRun.Status.SUCCEEDED
    assert incremental.from_date == date(2013, 5, 24)
    assert incremental.response_date == datetime(2026, 5, 2, 9, 30, tzinfo=UTC)
    assert (incremental.pages, incremental.created) == (1, 0)
    assert harvest_next_from(set_spec="physics", metadata_prefix="arXiv") == date(2026, 5, 2)


class Killed(BaseException):
    """Stands in for SIGKILL: not an Exception, so nothing in the harvester handles it."""


class KillAfter(httpx.HTTPTransport):
    def __init__(self, responses: int):
        super().__init__()
        self.left = responses

    def handle_request(self, request):
        if self.left == 0:
            raise Killed
        self.left -= 1
        return super().handle_request(request)


def test_killed_run_resumes_to_the_same_database_as_an_uninterrupted_one(oai_url, httpserver, db):
    serve_arxiv_chain(httpserver, window=ARXIV_WINDOW)
    run_arxiv_chain()
    uninterrupted = database_state()
    assert len(uninterrupted[0]) == CHAIN_IDS
    Paper.objects.all().delete()
    HarvestRun.objects.all().delete()
    httpserver.clear_log()

    with pytest.raises(Killed):
        run_arxiv_chain(client=ArxivOAIClient(transport=KillAfter(2)))
    run = HarvestRun.objects.get()
    # Killed while fetching page 3: pages 1 and 2 are in, with the checkpoint that matches.
    assert run.status == HarvestRun.Status.RUNNING
    assert (run.pages, run.resumption_token, run.created) == (2, "436115|406001", 2000)
    assert Paper.objects.count() == 2000

    resumed = harvest_window(resume_run_id=run.pk)
    assert resumed.pk == run.pk and resumed.status == HarvestRun.Status.SUCCEEDED
    assert (resumed.pages, resumed.created, resumed.unchanged) == (3, CHAIN_IDS, 0)
    # The resume asked for page 3 only.
    assert [q.get("resumptionToken") for q in requested(httpserver)] == [
        None,
        "436115|5001",
        "436115|406001",
    ]
    assert database_state() == uninterrupted
    assert Paper.objects.values("arxiv_id").distinct().count() == CHAIN_IDS


def test_incremental_run_continues_an_unfinished_run(oai_url, httpserver, db):
    serve_arxiv_chain(httpserver, window=ARXIV_WINDOW)
    with pytest.raises(Killed):
        run_arxiv_chain(client=ArxivOAIClient(transport=KillAfter(1)))
    continued = harvest_window(set_spec="physics", metadata_prefix="arXiv", incremental=True)
    assert HarvestRun.objects.count() == 1
    assert continued.status == HarvestRun.Status.SUCCEEDED and continued.created == CHAIN_IDS


def test_bad_resumption_token_restarts_the_window_from_its_checkpoint(oai_url, httpserver, db):
    token = {"verb": "ListRecords", "resumptionToken": CURRENT_TOKEN}
    serve(
        httpserver,
        {"verb": "ListRecords", **QUANT_PH, "from": "2008-01-01"},
        oai_bytes(CURRENT_1),
        ordered=True,
    )
    serve(httpserver, token, oai_bytes("current_error_badResumptionToken.xml"), ordered=True)
    # Pages came in datestamp order, so the restart starts at the newest datestamp saved.
    serve(
        httpserver,
        {"verb": "ListRecords", **QUANT_PH, "from": "2008-01-25"},
        oai_bytes(CURRENT_1),
        ordered=True,
    )
    serve(httpserver, token, oai_bytes(CURRENT_2), ordered=True)
    run = harvest_window(
        set_spec="physics:quant-ph", metadata_prefix="arXivRaw", from_date=date(2008, 1, 1)
    )
    httpserver.check_assertions()
    assert run.status == HarvestRun.Status.SUCCEEDED
    assert run.restarts == 1 and "badResumptionToken" in run.errors[0]["message"]
    assert (run.pages, run.created, run.unchanged) == (3, 6, 3)
    assert run.checkpoint_datestamp == date(2008, 11, 26)
    assert Paper.objects.count() == 6


def test_a_list_that_ends_early_is_retried_then_fails_the_run_resumably(oai_url, httpserver, db):
    """The answer to a token must carry a token (empty on the last page), and a list must
    deliver what it announced: noRecordsMatch, or a page without a token, in answer to a
    token is a list cut short. Taking it would end the harvest "succeeded" at 1,000 of the
    announced 907,096 records, and the next incremental run would start after the rest."""
    serve(httpserver, {"verb": "ListRecords", **QUANT_PH}, oai_bytes(RAW_PAGE))
    serve(
        httpserver,
        {"verb": "ListRecords", "resumptionToken": "496549|47001"},
        oai_bytes("current_error_noRecordsMatch.xml"),
    )
    with pytest.raises(IncompleteList, match="noRecordsMatch in answer to resumptionToken"):
        harvest_window(set_spec="physics:quant-ph", metadata_prefix="arXivRaw")
    run = HarvestRun.objects.get()
    assert run.status == HarvestRun.Status.FAILED
    assert (run.pages, run.resumption_token, run.created) == (1, "496549|47001", 1000)
    assert [q.get("resumptionToken") for q in requested(httpserver)] == [None] + [
        "496549|47001"
    ] * 4  # ARXIV_OAI_MAX_RETRIES is 3 in these tests
    assert harvest_next_from(set_spec="physics:quant-ph", metadata_prefix="arXivRaw") is None


def test_no_records_match_is_an_empty_successful_run(oai_url, httpserver, db):
    serve(
        httpserver,
        {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": "cs", "from": "2026-05-02"},
        oai_bytes("current_error_noRecordsMatch.xml"),
    )
    run = harvest_window(set_spec="cs", from_date=date(2026, 5, 2))
    assert run.status == HarvestRun.Status.SUCCEEDED
    assert (run.pages, run.created, run.rejected) == (1, 0, 0)
    assert Paper.objects.count() == 0


def test_other_oai_errors_fail_the_run_clearly(oai_url, httpserver, db):
    serve(
        httpserver,
        {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": "cs"},
        oai_bytes("current_error_badArgument.xml"),
    )
    with pytest.raises(oai.OAIError):
        harvest_window(set_spec="cs")
    run = HarvestRun.objects.get()
    assert run.status == HarvestRun.Status.FAILED and run.finished_at is not None
    assert "badArgument" in run.errors[-1]["message"]


def test_truncated_page_fails_clearly_and_keeps_earlier_pages(oai_url, httpserver, db):
    body = oai_bytes(ARXIV_PAGE_2)
    serve(httpserver, {"verb": "ListRecords", **ARXIV_WINDOW}, oai_bytes(ARXIV_PAGE_1))
    serve(
        httpserver,
        {"verb": "ListRecords", "resumptionToken": "436115|5001"},
        body[: len(body) * 2 // 3],
    )
    with pytest.raises(Exception, match="not well-formed"):
        run_arxiv_chain()
    run = HarvestRun.objects.get()
    assert run.status == HarvestRun.Status.FAILED
    assert "MalformedResponse" in run.errors[-1]["message"]
    assert (run.pages, run.resumption_token) == (1, "436115|5001")
    assert Paper.objects.count() == 1000
    # Once the server sends whole pages again, the run resumes where it stopped.
    httpserver.clear()
    serve_arxiv_chain(httpserver, window=ARXIV_WINDOW)
    resumed = harvest_window(resume_run_id=run.pk)
    assert resumed.status == HarvestRun.Status.SUCCEEDED
    assert Paper.objects.count() == CHAIN_IDS
    assert [q.get("resumptionToken") for q in requested(httpserver)] == [
        "436115|5001",
        "436115|406001",
    ]


def test_broken_records_are_set_aside_and_deleted_ones_marked(oai_url, httpserver, db):
    serve(
        httpserver, {"verb": "ListRecords", **QUANT_PH, "from": "2008-01-01"}, oai_bytes(CURRENT_1)
    )
    serve(
        httpserver, {"verb": "ListRecords", "resumptionToken": CURRENT_TOKEN}, oai_bytes(CURRENT_2)
    )
    harvest_window(set_spec="physics:quant-ph", from_date=date(2008, 1, 1))
    assert Paper.objects.filter(is_deleted=True).count() == 0
    httpserver.clear()
    serve(
        httpserver,
        {"verb": "ListRecords", **QUANT_PH, "from": "2008-01-25", "until": "2008-01-25"},
        oai_bytes("current_listrecords_arXivRaw_deleted_and_broken.xml"),
    )
    run = harvest_window(
        set_spec="physics:quant-ph", from_date=date(2008, 1, 25), until_date=date(2008, 1, 25)
    )
    assert run.status == HarvestRun.Status.SUCCEEDED
    assert (run.unchanged, run.rejected, run.deleted) == (1, 2, 1)
    deleted = Paper.objects.get(arxiv_id="0801.3684")
    assert deleted.is_deleted and deleted.authorships.count() > 0  # marked, not dropped
    rejected = {r.record_key: r for r in RejectedRecord.objects.all()}
    assert set(rejected) == {"oai:arXiv.org:0801.3675", "oai:arXiv.org:0801.3680"}
    assert all(r.source == "oai:physics:quant-ph" for r in rejected.values())
    assert "Wed, 31 Foo 2008" in rejected["oai:arXiv.org:0801.3675"].reason
    assert rejected["oai:arXiv.org:0801.3680"].raw.startswith("<record")
    assert "<id>0801.3680</id>" in rejected["oai:arXiv.org:0801.3680"].raw
    # The earlier good version of a rejected record is left as it was.
    assert Paper.objects.get(arxiv_id="0801.3675").published == datetime(
        2008, 1, 24, 15, 39, 48, tzinfo=UTC
    )
    # A rerun updates the rejections instead of adding rows.
    harvest_window(
        set_spec="physics:quant-ph", from_date=date(2008, 1, 25), until_date=date(2008, 1, 25)
    )
    assert RejectedRecord.objects.count() == 2


def test_arxiv_format_on_current_server_keeps_known_v1_date_and_version(
    oai_url, httpserver, db, paper_factory
):
    known = paper_factory(
        arxiv_id="1412.8544", version=3, published=datetime(2014, 12, 29, 18, 1, 2, tzinfo=UTC)
    )
    body = oai_bytes("listrecords_arXiv_from2015-01-01_until2015-01-03.xml").replace(
        b"<responseDate>2018-06-21T14:31:04Z", b"<responseDate>2026-05-02T09:15:07Z"
    )
    serve(httpserver, {"verb": "ListRecords", "metadataPrefix": "arXiv"}, body)
    harvest_window(metadata_prefix="arXiv")
    known.refresh_from_db()
    assert known.published == datetime(2014, 12, 29, 18, 1, 2, tzinfo=UTC)
    assert known.version == 3
    assert known.title == "A Kochen-Specker system has at least 22 vectors (extended abstract)"
    new = Paper.objects.get(arxiv_id="hep-th/9504118")
    # The current server's `created` is not v1's date: the month the identifier names stands.
    assert (new.published, new.published_precision) == (datetime(1995, 4, 1, tzinfo=UTC), "month")


def test_page_ingest_runs_a_bounded_number_of_queries(oai_url, db, django_assert_max_num_queries):
    """The query count depends on the page (bulk inserts are batched by the vendor's parameter
    limit, so a column more on Paper or Authorship is a few statements more: about 94 for
    1,000 papers on SQLite since Authorship.is_person, fewer on PostgreSQL), never on how many
    papers the database already holds."""
    run = harvest_run_create(set_spec="physics", metadata_prefix="arXiv")
    page = oai.parse_list_records(oai_bytes(ARXIV_PAGE_1), metadata_prefix="arXiv")
    with django_assert_max_num_queries(100):
        counts, changed = harvest_page_ingest(run, page)
    assert counts.created == 1000 and len(changed) == 1000
    page = oai.parse_list_records(oai_bytes(ARXIV_PAGE_3), metadata_prefix="arXiv")
    with django_assert_max_num_queries(14):
        harvest_page_ingest(run, page)
    page = oai.parse_list_records(oai_bytes(ARXIV_PAGE_2), metadata_prefix="arXiv")
    with django_assert_max_num_queries(100):
        harvest_page_ingest(run, page)
    run.refresh_from_db()
    assert (run.pages, run.created) == (3, 2002)


def test_a_locked_set_is_not_harvested_twice(oai_url, httpserver, db):
    with harvest_lock("physics"), pytest.raises(HarvestLocked):
        run_arxiv_chain()
    assert requested(httpserver) == [] and HarvestRun.objects.count() == 0
    serve_arxiv_chain(httpserver, window=ARXIV_WINDOW)
    assert run_arxiv_chain().status == HarvestRun.Status.SUCCEEDED  # released


def test_harvest_command_runs_a_window_and_prints_a_summary(oai_url, httpserver, db, capsys):
    serve_arxiv_chain(httpserver, window=ARXIV_WINDOW)
    call_command(
        "harvest_arxiv",
        "--set",
        "physics",
        "--from",
        "2007-05-23",
        "--metadata-prefix",
        "arXiv",
        "--endpoint",
        oai_url,
    )
    out = capsys.readouterr().out
    run = HarvestRun.objects.get()
    assert f"harvest run {run.pk} succeeded: set physics, arXiv, 2007-05-23..today; 3 pages" in out
    assert f"created {CHAIN_IDS}, updated 0, unchanged 0, rejected 0, deleted 0" in out
    assert "next incremental run starts from 2013-05-24" in out
    assert run.endpoint == oai_url


def test_harvest_command_reports_failures_with_the_run_to_resume(oai_url, httpserver, db):
    serve(
        httpserver,
        {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": "cs", "from": "2026-01-01"},
        oai_bytes("current_error_badArgument.xml"),
    )
    with pytest.raises(CommandError) as info:
        call_command("harvest_arxiv", "--set", "cs", "--from", "2026-01-01", "--no-progress")
    run = HarvestRun.objects.get()
    assert f"--resume {run.pk}" in str(info.value) and "badArgument" in str(info.value)
    with pytest.raises(CommandError, match="not a date"):
        call_command("harvest_arxiv", "--from", "yesterday")


def test_harvest_runs_are_listed_in_the_admin(oai_url, httpserver, admin_client, db):
    serve_arxiv_chain(httpserver, window=ARXIV_WINDOW)
    run = run_arxiv_chain()
    response = admin_client.get("/admin/papers/harvestrun/")
    assert response.status_code == 200
    assert b"physics" in response.content
    detail = admin_client.get(f"/admin/papers/harvestrun/{run.pk}/change/")
    assert detail.status_code == 200 and b"436115" not in detail.content  # token cleared at end
    assert admin_client.get("/admin/papers/harvestrun/add/").status_code == 403
