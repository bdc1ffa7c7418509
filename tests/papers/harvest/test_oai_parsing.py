"""The OAI-PMH parsers on the recorded responses (pure functions, no network, no database)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
from lxml import etree

from papers.harvest import oai
from papers.ingest.textmode import text_mode_to_unicode
from tests.papers.conftest import (
    ARXIV_PAGE_1,
    ARXIV_PAGE_3,
    CURRENT_1,
    CURRENT_2,
    CURRENT_TOKEN,
    RAW_PAGE,
    oai_bytes,
)

OAI = "{http://www.openarchives.org/OAI/2.0/}"


def _by_id(page):
    return {r.arxiv_id: r for r in page.records}


def test_arxiv_format_page_record_field_by_field():
    page = oai.parse_list_records(oai_bytes(ARXIV_PAGE_1), metadata_prefix="arXiv")
    assert len(page.records) == 1000 and not page.rejected and not page.deleted
    assert page.response_date == datetime(2013, 5, 24, 20, 43, 21, tzinfo=UTC)
    assert page.token == oai.ResumptionToken(
        value="436115|5001", cursor=4000, complete_list_size=846926, expiration=None
    )
    record = _by_id(page)["0704.4001"]
    assert record.title == "Warping and Supersymmetry Breaking"
    assert record.categories == ["hep-th"]
    # Legacy server: <created> is the v1 date.
    assert record.published == datetime(2007, 4, 30, tzinfo=UTC)
    assert record.updated == date(2008, 1, 28)  # the header datestamp
    assert record.report_no == "RUNHETC-07-05"
    assert record.comments == (
        "Latex, 29 pp, 1 figure. Reference added, some typos corrected "
        "and minor changes to the content"
    )
    assert [(a.keyname, a.forenames) for a in record.authors] == [
        ("Douglas", "Michael R."),
        ("Shelton", "Jessie"),
        ("Torroba", "Gonzalo"),
    ]
    assert record.authors_raw == "Michael R. Douglas, Jessie Shelton, Gonzalo Torroba"
    assert record.abstract.startswith(
        "We analyze supersymmetry breaking by anti-self-dual flux "
        "in the deformed conifold. This theory"
    )
    assert "\n" not in record.abstract


FULL_NAME = ("forenames", "keyname", "suffix")


def test_arxiv_format_matches_an_independent_reading_of_every_record():
    data = oai_bytes(ARXIV_PAGE_1)
    page = _by_id(oai.parse_list_records(data, metadata_prefix="arXiv"))
    tree = etree.fromstring(data)
    ns = {"o": OAI[1:-1], "a": "http://arxiv.org/OAI/arXiv/"}
    records = tree.findall(".//o:record", ns)
    assert len(records) == len(page) == 1000
    for rec in records:
        meta = rec.find(".//a:arXiv", ns)
        record = page[meta.findtext("a:id", namespaces=ns)]
        typed = " ".join(meta.findtext("a:title", namespaces=ns).split())
        assert record.title == text_mode_to_unicode(typed)
        assert record.categories == meta.findtext("a:categories", namespaces=ns).split()
        assert record.doi == (meta.findtext("a:doi", namespaces=ns) or "").strip()
        assert record.updated.isoformat() == rec.findtext(".//o:datestamp", namespaces=ns)
        # arXiv's own split keeps "for the ATLAS Collaboration" (and what follows) as names,
        # and "et al." in one ("H. O. Back et al."): notes, not authors (papers.nonpersons).
        names = [
            " ".join(filter(None, (a.findtext(f"a:{f}", namespaces=ns) for f in FULL_NAME)))
            for a in meta.findall("a:authors/a:author", ns)
        ]
        notes = [i for i, n in enumerate(names) if n.lower().startswith("for the ")]
        expected = [
            re.sub(r"( for the .*Collaboration|,? et al\.?)$", "", n)
            for n in names[: notes[0] if notes else None]
        ]
        assert [a.display for a in record.authors] == expected
        created = meta.findtext("a:created", namespaces=ns)
        assert record.published.date().isoformat() == created


def test_arxiv_raw_versions_give_v1_date_and_version_and_affiliations():
    page = oai.parse_list_records(oai_bytes(RAW_PAGE), metadata_prefix="arXivRaw")
    assert len(page.records) == 1000 and not page.rejected
    assert page.token.value == "496549|47001" and page.token.cursor == 46000
    record = _by_id(page)["0801.3674"]
    assert record.version == 4
    assert record.published == datetime(2008, 1, 23, 21, 13, 53, tzinfo=UTC)
    assert record.updated == date(2008, 11, 26)
    assert record.submitter == "Robert Brandenberger"
    assert record.title == (
        "A Study of Structure Formation and Reheating in the D3/D7 Brane Inflation Model"
    )
    assert record.categories == ["hep-th", "astro-ph", "gr-qc", "hep-ph"]
    assert record.journal_ref == "Phys.Rev.D78:083502,2008"
    assert record.doi == "10.1103/PhysRevD.78.083502"
    assert record.license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
    assert [(a.display, a.affiliation) for a in record.authors] == [
        ("Robert H. Brandenberger", "McGill"),
        ("Keshav Dasgupta", "McGill"),
        ("Anne-Christine Davis", "DAMTP, Cambridge"),
    ]


def test_arxiv_raw_tex_accents_in_bylines_are_decoded():
    page = _by_id(oai.parse_list_records(oai_bytes(RAW_PAGE)))
    tex = [r for r in page.values() if "Jean-Claude" in r.authors_raw]
    assert len(tex) == 1
    record = tex[0]
    assert "Jean-Claude Léon" in record.authors_raw
    assert [a.display for a in record.authors] == [
        "Robert Iacob",
        "Peter Mitrouchev",
        "Jean-Claude Léon",
    ]
    assert all(a.affiliation == "LGS" for a in record.authors)
    assert not any("\\" in a.display for r in page.values() for a in r.authors)


def test_current_server_tokens_percent_encoded_and_empty_last():
    first = oai.parse_list_records(oai_bytes(CURRENT_1))
    assert first.token.value == CURRENT_TOKEN  # opaque: not unescaped
    assert first.token.expiration == datetime(2026, 5, 3, tzinfo=UTC)
    assert first.token.cursor is None and not first.token.is_last
    assert [r.arxiv_id for r in first.records] == ["0801.3673", "0801.3675", "0801.3680"]
    last = oai.parse_list_records(oai_bytes(CURRENT_2))
    assert last.token is not None and last.token.is_last
    assert last.datestamps_ordered and last.max_datestamp == date(2008, 11, 26)


def test_legacy_empty_last_tokens():
    page = oai.parse_list_records(oai_bytes(ARXIV_PAGE_3), metadata_prefix="arXiv")
    assert page.token.is_last and page.token.cursor == 2000
    headers = oai.parse_list_identifiers(
        oai_bytes("listidentifiers_2016_page2_last_empty_token.xml")
    )
    assert headers.token.is_last and headers.token.complete_list_size == 5
    assert [h.identifier for h in headers.headers] == [
        "oai:arXiv.org:1501.05750",
        "oai:arXiv.org:1501.05751",
    ]


def test_arxiv_format_created_is_not_v1_on_the_current_server():
    data = oai_bytes("listrecords_arXiv_from2015-01-01_until2015-01-03.xml").replace(
        b"<responseDate>2018-06-21T14:31:04Z", b"<responseDate>2026-05-02T09:15:07Z"
    )
    page = oai.parse_list_records(data, metadata_prefix="arXiv")
    assert not page.has_published
    assert [r.published for r in page.records] == [None, None]
    legacy = oai.parse_list_records(
        oai_bytes("listrecords_arXiv_from2015-01-01_until2015-01-03.xml"), metadata_prefix="arXiv"
    )
    assert legacy.has_published
    assert legacy.records[1].published == datetime(1995, 4, 24, tzinfo=UTC)
    assert legacy.records[1].arxiv_id == "hep-th/9504118"


def test_deleted_header_and_broken_records_are_kept_apart():
    page = oai.parse_list_records(oai_bytes("current_listrecords_arXivRaw_deleted_and_broken.xml"))
    assert [r.arxiv_id for r in page.records] == ["0801.3673"]
    assert page.deleted == ["0801.3684"]
    reasons = {r.identifier: r.reason for r in page.rejected}
    assert set(reasons) == {"oai:arXiv.org:0801.3675", "oai:arXiv.org:0801.3680"}
    assert "Wed, 31 Foo 2008" in reasons["oai:arXiv.org:0801.3675"]
    assert "no categories" in reasons["oai:arXiv.org:0801.3680"]
    assert all(r.raw.startswith("<record") for r in page.rejected)


def test_oai_errors():
    empty = oai.parse_list_records(oai_bytes("current_error_noRecordsMatch.xml"))
    assert empty.no_records_match and empty.records == [] and empty.token is None
    assert empty.response_date == datetime(2026, 5, 2, 9, 30, tzinfo=UTC)
    with pytest.raises(oai.BadResumptionToken):
        oai.parse_list_records(oai_bytes("current_error_badResumptionToken.xml"))
    with pytest.raises(oai.OAIError) as info:
        oai.parse_list_records(oai_bytes("current_error_badArgument.xml"))
    assert info.value.code == "badArgument" and "from must be YYYY-MM-DD" in str(info.value)


def test_truncated_page_is_a_syntax_error_and_html_is_not_oai():
    data = oai_bytes(ARXIV_PAGE_1)
    with pytest.raises(etree.XMLSyntaxError):
        oai.parse_list_records(data[: len(data) // 2])
    with pytest.raises(oai.OAIError) as info:
        oai.parse_list_records(b"<html><body>\n<h1>Retry after 10 seconds</h1>\n</body></html>\n")
    assert info.value.code == "notOAIPMH"


def test_identify_list_sets_get_record():
    identify = oai.parse_identify(oai_bytes("identify.xml"))
    assert identify.repository_name == "arXiv"
    assert identify.earliest_datestamp == "2007-05-23"
    assert identify.deleted_record == "persistent"
    assert identify.granularity == "YYYY-MM-DD"
    assert identify.admin_emails == ["help@arxiv.org"]
    sets, token = oai.parse_list_sets(oai_bytes("listsets.xml"))
    assert len(sets) == 21 and token is None
    assert sets[0] == oai.OAISet(spec="cs", name="Computer Science")
    assert oai.OAISet(spec="physics:hep-th", name="High Energy Physics - Theory") in sets
    page = oai.parse_get_record(oai_bytes("getrecord_arXiv_1412.8544.xml"), metadata_prefix="arXiv")
    (record,) = page.records
    assert record.arxiv_id == "1412.8544"
    assert [(a.display, a.affiliation) for a in record.authors] == [
        ("Sander Uijlen", "Radboud Universiteit"),
        ("Bas Westerbaan", "Radboud Universiteit"),
    ]
    assert record.journal_ref == "EPTCS 172, 2014, pp. 154-164"
    assert record.abstract.count("\n\n") == 1  # the indented second paragraph
