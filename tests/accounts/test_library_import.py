"""Importing BibTeX and RIS into a list: real exports (doi.org's BibTeX, a ScienceDirect RIS
file, our own exporter's output of real arXiv records), matched by arXiv id, DOI, then title."""

from __future__ import annotations

import logging
import re
import time
from datetime import datetime

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from lxml import etree

from accounts.library import import_jobs, importing
from accounts.library.lists import reading_list_create, reading_list_default, reading_list_share
from accounts.library.models import LibraryImport, SavedPaper
from accounts.library.notes import saved_paper_note_set
from papers.citations.export import citation_entries, to_bibtex, to_ris
from papers.ingest.importing import snapshot_import
from papers.models import Paper

pytestmark = pytest.mark.django_db

ATOM = {"a": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}


@pytest.fixture
def imports_dir(fixtures_dir):
    return fixtures_dir / "library-import"


@pytest.fixture
def snapshot_papers(fixtures_dir):
    snapshot_import(fixtures_dir / "arxiv-snapshot" / "first200.jsonl")
    return list(Paper.objects.order_by("arxiv_id")[:12])


def _hold_arxiv_record(paper_factory, path, *, with_doi: bool = True) -> Paper:
    """The paper of a recorded arXiv API answer, as the archive would hold it."""
    entry = etree.parse(str(path)).getroot().find("a:entry", ATOM)
    arxiv_id = re.sub(r"v\d+$", "", entry.findtext("a:id", namespaces=ATOM).rsplit("/abs/", 1)[1])
    doi = entry.findtext("arxiv:doi", default="", namespaces=ATOM) if with_doi else ""
    authors = [a.findtext("a:name", namespaces=ATOM) for a in entry.findall("a:author", ATOM)]
    published = entry.findtext("a:published", namespaces=ATOM)
    return paper_factory(
        arxiv_id=arxiv_id,
        title=" ".join(entry.findtext("a:title", namespaces=ATOM).split()),
        abstract=" ".join(entry.findtext("a:summary", namespaces=ATOM).split()),
        authors=authors,
        doi=doi,
        published=datetime.fromisoformat(published.replace("Z", "+00:00")),
    )


def test_our_bibtex_export_of_real_papers_comes_back_whole_by_arxiv_id(
    user_factory, snapshot_papers
):
    user = user_factory()
    reading_list = reading_list_create(user=user, name="Imported")
    text = to_bibtex(citation_entries(snapshot_papers))
    report = importing.library_import(user=user, reading_list=reading_list, text=text)
    assert not report.error and not report.unmatched
    assert {paper.pk for _, paper, _ in report.matched} == {p.pk for p in snapshot_papers}
    assert {how for _, _, how in report.matched} == {"arXiv id"}
    assert report.added == len(snapshot_papers)
    again = importing.library_import(user=user, reading_list=reading_list, text=text)
    assert again.added == 0 and len(again.matched) == len(snapshot_papers)
    assert SavedPaper.objects.filter(reading_list=reading_list).count() == len(snapshot_papers)


def test_our_ris_export_comes_back_by_arxiv_id(user_factory, snapshot_papers):
    user = user_factory()
    reading_list = reading_list_default(user=user)
    text = to_ris(citation_entries(snapshot_papers[:5]))
    report = importing.library_import(
        user=user, reading_list=reading_list, text=text, filename="zotero.ris"
    )
    assert [paper.arxiv_id for _, paper, _ in report.matched] == [
        p.arxiv_id for p in snapshot_papers[:5]
    ]
    assert report.added == 5


def test_doi_org_bibtex_without_an_arxiv_id_matches_by_doi(
    user_factory, paper_factory, imports_dir
):
    held = _hold_arxiv_record(paper_factory, imports_dir / "query_id_list_astro-ph_9812133.xml")
    assert held.doi == "10.1086/307221"
    user = user_factory()
    text = (imports_dir / "doi-10.1086-307221.bib").read_text()
    report = importing.library_import(
        user=user, reading_list=reading_list_default(user=user), text=text
    )
    ((reference, paper, how),) = report.matched
    assert paper == held and how == "DOI" and reference.doi == "10.1086/307221"
    assert not reference.arxiv_id


def test_a_published_title_unlike_the_preprints_is_reported_unmatched(
    user_factory, paper_factory, imports_dir
):
    # The arXiv record without its DOI: only the title could match, and the journal's title
    # ("… Biological and Robotic Grasp …") is not the preprint's.
    held = _hold_arxiv_record(
        paper_factory, imports_dir / "query_id_list_1710.08557.xml", with_doi=False
    )
    user = user_factory()
    text = (imports_dir / "doi-10.1186-s12984-017-0305-3.bib").read_text()
    report = importing.library_import(
        user=user, reading_list=reading_list_default(user=user), text=text
    )
    assert not report.matched and report.unmatched[0].doi == "10.1186/s12984-017-0305-3"
    assert not SavedPaper.objects.filter(paper=held).exists()
    # With the DOI the archive records, the same file finds it.
    Paper.objects.filter(pk=held.pk).update(doi="10.1186/s12984-017-0305-3")
    report = importing.library_import(
        user=user, reading_list=reading_list_default(user=user), text=text
    )
    assert [(paper.pk, how) for _, paper, how in report.matched] == [(held.pk, "DOI")]


def test_an_entry_with_a_title_alone_matches_by_title(user_factory, snapshot_papers):
    # Our exporter's entry with its identifiers taken out, as a hand-kept bibliography has it.
    paper = snapshot_papers[3]
    entry = to_bibtex(citation_entries([paper]))
    bare = "\n".join(
        line
        for line in entry.splitlines()
        if not line.strip().startswith(("eprint", "archivePrefix", "url", "doi", "journal"))
    )
    assert paper.arxiv_id not in bare
    (reference,) = importing.references_from_bibtex(bare).references
    assert not reference.arxiv_id and not reference.doi
    report = importing.references_match([reference])
    assert [(p.pk, how) for _, p, how in report.matched] == [(paper.pk, "title")]


def test_a_sciencedirect_ris_file_is_read_and_reported_unmatched(user_factory, imports_dir):
    text = (imports_dir / "sciencedirect-jabref.ris").read_text()
    (reference,) = importing.references_read(text, filename="export.ris").references
    assert reference.doi == "10.1016/j.actamat.2016.09.028"
    assert reference.title.startswith("Phase separation and ω transformation")
    user = user_factory()
    report = importing.library_import(
        user=user, reading_list=reading_list_default(user=user), text=text
    )
    assert report.unmatched == [reference] and report.added == 0


@pytest.mark.parametrize(
    "text, arxiv_id",
    [
        ("arXiv preprint arXiv:1706.03762", "1706.03762"),
        ("https://arxiv.org/abs/hep-th/9901001v2", "hep-th/9901001"),
        ("http://arxiv.org/pdf/1710.08557v1", "1710.08557"),
        ("10.48550/arXiv.2401.01234", "2401.01234"),
        ("Phys. Rev. D 97, 052003 (2018)", ""),
    ],
)
def test_arxiv_ids_are_read_where_reference_managers_write_them(text, arxiv_id):
    assert importing._arxiv_id([text]) == arxiv_id


def test_matching_many_entries_by_id_and_doi_is_two_queries(
    snapshot_papers, django_assert_num_queries
):
    entries = to_bibtex(citation_entries(snapshot_papers))
    references = importing.references_from_bibtex(entries).references
    with_dois = [r for r in references if r.doi]
    assert with_dois, "the snapshot's first papers include published ones"
    with django_assert_num_queries(2):
        report = importing.references_match(references)
    assert len(report.matched) == len(snapshot_papers)


def test_the_import_page_says_what_matched_and_what_did_not(
    user_factory, snapshot_papers, imports_dir
):
    user = user_factory()
    reading_list = reading_list_default(user=user)
    client = Client()
    client.force_login(user)
    bib = to_bibtex(citation_entries(snapshot_papers[:2]))
    bib += "\n" + (imports_dir / "doi-10.1086-307221.bib").read_text()
    upload = SimpleUploadedFile("library.bib", bib.encode(), content_type="application/x-bibtex")
    response = client.post(f"/me/library/{reading_list.pk}/import", {"file": upload}, follow=True)
    # The file is a job a worker reads (inline here: no broker), followed on its own page.
    ((job_page, status),) = response.redirect_chain
    job = LibraryImport.objects.get()
    assert (job_page, status) == (f"/me/library/{reading_list.pk}/imports/{job.pk}", 302)
    assert job.status == LibraryImport.DONE and job.text == ""  # the file is not kept
    html = response.content.decode()
    assert response.status_code == 200
    assert 'http-equiv="refresh"' not in html  # done: the page stops looking again
    assert "Found (2)" in html and "Not found (1)" in html and "10.1086/307221" in html
    assert "2 papers added" in html
    # The count of what was read: it said "2 of 0 references".
    assert "2 of 3 references found here" in html
    # The result's address opened again leads to the list, not to a blank 405.
    again = client.get(f"/me/library/{reading_list.pk}/import", follow=True)
    assert again.redirect_chain == [(f"/me/library/{reading_list.pk}", 302)]
    assert "papers it added are in this list" in again.content.decode()
    upload = SimpleUploadedFile("library.bib", bib.encode())
    markdown = client.post(
        f"/me/library/{reading_list.pk}/import",
        {"file": upload},
        HTTP_ACCEPT="text/markdown",
        follow=True,
    ).content.decode()
    assert "## Not found" in markdown and "0 papers added" in markdown


def test_an_import_into_someone_elses_list_is_not_found(user_factory, snapshot_papers):
    owner, other = user_factory(), user_factory()
    theirs = reading_list_default(user=owner)
    client = Client()
    client.force_login(other)
    upload = SimpleUploadedFile("x.bib", to_bibtex(citation_entries(snapshot_papers[:1])).encode())
    assert client.post(f"/me/library/{theirs.pk}/import", {"file": upload}).status_code == 404
    assert not SavedPaper.objects.exists()


def _import(user, text: str, filename: str = "library.bib") -> importing.ImportReport:
    return importing.library_import(
        user=user,
        reading_list=reading_list_default(user=user),
        text=text,
        filename=filename,
    )


@pytest.mark.parametrize(
    "text, filename",
    [
        ("@article{k, doi={10.1234/ab\x00cd}, title={x\x01y}}", "library.bib"),
        ("TY  - JOUR\r\nDO  - 10.1234/a\x00b\r\nTI  - x\x7fy\r\nER  - \r\n", "library.ris"),
    ],
)
def test_control_characters_in_a_file_are_taken_out(user_factory, text, filename):
    # PostgreSQL refused the NUL in the DOI lookup: a DataError, a 500.
    report = _import(user_factory(), text, filename)
    assert report.error == ""
    ((reference),) = report.unmatched
    assert reference.doi in ("10.1234/abcd", "10.1234/ab") and reference.title == "xy"


def test_ris_entries_without_an_end_are_each_read(user_factory):
    # rispy raised a TypeError on this 42-byte file (two TY lines, no ER).
    report = _import(user_factory(), "TY  - JOUR\r\nTI  - x\r\nTY  - JOUR\r\nTI  - x\r\n", "a.ris")
    assert report.error == "" and [r.title for r in report.unmatched] == ["x", "x"]


def test_a_bibtex_block_that_cannot_be_read_is_reported_and_the_rest_imported(
    user_factory, snapshot_papers, caplog
):
    good = to_bibtex(citation_entries(snapshot_papers[:2]))
    with caplog.at_level(logging.WARNING):
        report = _import(user_factory(), "@a{\n" + good)
    assert len(report.matched) == 2 and report.added == 2
    assert report.unreadable_count == 1
    assert report.unreadable[0].startswith("'@a{")
    # bibtexparser's own line for each block is not written: the report says it.
    assert not [r for r in caplog.records if r.name.startswith("bibtexparser")]


def test_a_file_of_800000_broken_blocks_is_refused_at_once(user_factory):
    text = "@a{" * 800_000  # 2.4 MB: under the size cap, parsed in about a minute
    started = time.monotonic()
    report = _import(user_factory(), text)
    assert time.monotonic() - started < 2
    assert "800,000 blocks, more than the 5,000" in report.error


def test_parsing_stops_past_its_time_budget(user_factory, snapshot_papers, monkeypatch):
    monkeypatch.setattr(importing, "IMPORT_PARSE_SECONDS", 0.0)
    monkeypatch.setattr(importing, "PARSE_CHUNK_BLOCKS", 1)
    report = _import(user_factory(), to_bibtex(citation_entries(snapshot_papers[:3])))
    assert "took longer than 0 s to read" in report.error and report.added == 0


def test_imports_have_a_rate_limit(user_factory, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "imports": "2/hour"}
    user = user_factory()
    reading_list = reading_list_default(user=user)
    client = Client()
    client.force_login(user)
    answers = []
    for _ in range(3):
        upload = SimpleUploadedFile("library.bib", b"@article{k, title={x}}")
        answers.append(client.post(f"/me/library/{reading_list.pk}/import", {"file": upload}))
    assert [a.status_code for a in answers] == [302, 302, 429]  # two jobs' pages, then refused
    assert 0 < int(answers[2]["Retry-After"]) <= 3600
    assert "try again in" in answers[2].content.decode()


@pytest.mark.parametrize("text", ["", "\n\n", "not a reference file"])
def test_a_ris_file_without_entries_imports_nothing(user_factory, text):
    report = _import(user_factory(), text, "empty.ris")
    assert (report.error, report.matched, report.unmatched) == ("", [], [])


def test_tex_accents_and_case_braces_fold_before_matching_and_formulas_keep_theirs(
    user_factory, paper_factory
):
    godel = paper_factory(title="Gödel Incompleteness and the Limits of Proof")
    cox = paper_factory(title=r"The Cox Ring of $\bar{M}_{0,6}$")
    bib = (
        '@article{a, title={G{\\"o}del Incompleteness and the {L}imits of Proof}}\n'
        "@article{b, title={The {Cox} Ring of $\\bar{M}_{0,6}$}}\n"
    )
    report = _import(user_factory(), bib)
    assert [(ref.key, paper.pk, how) for ref, paper, how in report.matched] == [
        ("a", godel.pk, "title"),
        ("b", cox.pk, "title"),
    ]
    # As the reader's file has it, but for the braces that only protected the case.
    assert report.matched[1][0].title == r"The Cox Ring of $\bar{M}_{0,6}$"


def test_notes_go_both_ways_and_stay_out_of_a_shared_lists_export(user_factory, snapshot_papers):
    import json

    import bibtexparser
    import rispy

    user = user_factory()
    reading_list = reading_list_default(user=user)
    first, second = snapshot_papers[:2]
    bib = to_bibtex(citation_entries([first, second]))
    # Zotero writes a reader's note as annote.
    bib = bib.replace(
        "  eprint = {" + first.arxiv_id + "}",
        "  annote = {Read section 3 again}," + "\n  eprint = {" + first.arxiv_id + "}",
        1,
    )
    report = _import(user, bib)
    assert report.added == 2
    saved = SavedPaper.objects.get(reading_list=reading_list, paper=first)
    assert saved.note == "Read section 3 again"
    # A second import never overwrites what the reader wrote here.
    saved_paper_note_set(saved=saved, note="My own words")
    _import(user, bib)
    saved.refresh_from_db()
    assert saved.note == "My own words"

    client = Client()
    client.force_login(user)
    base = f"/me/library/{reading_list.pk}/cite"
    (entry,) = [
        e
        for e in bibtexparser.parse_string(client.get(f"{base}.bib").content.decode()).entries
        if e.fields_dict["eprint"].value == first.arxiv_id
    ]
    assert entry.fields_dict["annote"].value == "My own words"
    ris = rispy.loads(client.get(f"{base}.ris").content.decode())
    assert any("My own words" in r.get("notes", []) for r in ris)
    csl = json.loads(client.get(f"{base}.json").content)
    assert any("My own words" in item.get("note", "") for item in csl)
    # RIS notes come back as notes too, without the lines the export writes about itself.
    ris_text = client.get(f"{base}.ris").content.decode()
    other = user_factory()
    _import(other, ris_text, filename="mine.ris")
    assert SavedPaper.objects.get(reading_list__user=other, paper=first).note == "My own words"
    # The link a reader shares shows the papers, never the owner's notes.
    shared = reading_list_share(reading_list=reading_list)
    public = Client().get(f"/lists/shared/{shared.share_token}/cite.bib").content.decode()
    assert first.arxiv_id in public and "My own words" not in public


def test_a_doi_that_a_paper_lists_beside_another_is_found(user_factory, paper_factory):
    """0705.0020's doi field holds the article's DOI and its erratum's: either finds it."""
    paper = paper_factory(doi="10.1086/520497 10.1088/0004-637X/704/2/1743")
    paper_factory(doi="10.1000/other")
    bib = "@article{a, doi={10.1088/0004-637x/704/2/1743}}\n@article{b, doi={10.1086/520497}}\n"
    report = _import(user_factory(), bib)
    assert [(ref.key, found.pk, how) for ref, found, how in report.matched] == [
        ("a", paper.pk, "DOI"),
        ("b", paper.pk, "DOI"),
    ]


def test_an_import_is_followed_on_its_page_while_a_worker_has_not_read_it(
    user_factory, snapshot_papers, client
):
    """With a broker, the request only queues the file: its page says so and looks again until
    the worker's report is there; another reader cannot open it."""
    user, other = user_factory(), user_factory()
    reading_list = reading_list_default(user=user)
    bib = to_bibtex(citation_entries(snapshot_papers[:2]))
    job = LibraryImport.objects.create(
        user=user, reading_list=reading_list, filename="library.bib", text=bib
    )
    client.force_login(user)
    page = f"/me/library/{reading_list.pk}/imports/{job.pk}"
    waiting = client.get(page).content.decode()
    assert 'http-equiv="refresh" content="2"' in waiting and "Waiting for a worker" in waiting
    assert import_jobs.library_import_run(job.pk) == LibraryImport.DONE
    assert import_jobs.library_import_run(job.pk) == LibraryImport.DONE  # delivered twice: once
    done = client.get(page).content.decode()
    assert "Found (2)" in done and 'http-equiv="refresh"' not in done
    assert SavedPaper.objects.filter(reading_list=reading_list).count() == 2
    client.force_login(other)
    assert client.get(page).status_code == 404
