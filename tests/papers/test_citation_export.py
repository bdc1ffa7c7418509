"""Citation exports, read back by a real BibTeX parser (bibtexparser) and rendered by a real CSL
processor (citeproc-py, with the style it ships)."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import bibtexparser
import citeproc
import jsonschema
import pytest
import rispy
from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle
from citeproc.source.json import CiteProcJSON
from django.db import connection
from django.test.utils import CaptureQueriesContext

from papers.citations.export import (
    AUTHORS_MAX,
    AuthorName,
    CitationEntry,
    balanced_braces,
    citation_entries,
    csl_items,
    to_bibtex,
    to_csl_json,
    to_ris,
)
from papers.models import Authorship, Paper
from researchers.models import Researcher
from researchers.names import name_key

pytestmark = pytest.mark.django_db

# The style citeproc-py ships in its package data: nothing is downloaded.
STYLE = next((Path(citeproc.__file__).parent / "data" / "styles").glob("*.csl"))


def parse_bibtex(text: str):
    library = bibtexparser.parse_string(text)
    assert not library.failed_blocks, [block.error for block in library.failed_blocks]
    return library


def csl_bibliography(text: str) -> list[str]:
    items = json.loads(text)
    source = CiteProcJSON(items)
    bibliography = CitationStylesBibliography(CitationStylesStyle(str(STYLE)), source)
    for item in items:
        bibliography.register(Citation([CitationItem(item["id"])]))
    return [str(entry) for entry in bibliography.bibliography()]


def test_bibtex_round_trips_arxiv_fields_tex_titles_and_accented_names(preprint):
    library = parse_bibtex(to_bibtex(citation_entries([preprint])))
    (entry,) = library.entries
    assert entry.entry_type == "misc"
    assert entry.key == "orsted2024bounds"
    fields = {name: field.value for name, field in entry.fields_dict.items()}
    assert fields["eprint"] == "2401.00042"
    assert fields["archivePrefix"] == "arXiv"
    assert fields["primaryClass"] == "quant-ph"
    assert fields["title"] == r"Bounds on the $\alpha$-{Rényi} entropy of {SU(2)} chains"
    assert fields["author"] == "Ørsted, Émilie and Núñez, José"
    assert fields["year"] == "2024" and fields["url"] == "https://arxiv.org/abs/2401.00042"
    assert "doi" not in fields and "journal" not in fields


def test_published_paper_is_an_article_in_its_venue_keeping_the_arxiv_id(published):
    (entry,) = parse_bibtex(to_bibtex(citation_entries([published]))).entries
    fields = {name: field.value for name, field in entry.fields_dict.items()}
    assert entry.entry_type == "article"
    assert fields["journal"] == "Phys. Rev. D 97, 052003 (2024)"
    assert fields["doi"] == "10.1103/PhysRevD.97.052003"
    # The year of the journal reference, not of arXiv's version 1 (2023).
    assert fields["year"] == "2024"
    assert fields["eprint"] == "2305.01234" and fields["archivePrefix"] == "arXiv"


def test_unbalanced_braces_in_a_title_cannot_break_the_entry(paper_factory):
    paper = paper_factory(title=r"A {broken} title} with {open & 50% braces")
    (entry,) = parse_bibtex(to_bibtex(citation_entries([paper]))).entries
    assert entry.fields_dict["title"].value == r"A {broken} title with open \& 50\% braces"
    assert balanced_braces(r"\{ {a} }{") == r"\{ {a} }"
    assert balanced_braces(r"$\{x$ and {y}") == r"$x$ and {y}"


def test_colliding_keys_get_letters_in_arxiv_id_order_whatever_the_order(paper_factory):
    same = {"authors": ["Ada Lovelace"], "published": datetime(2024, 2, 1, tzinfo=UTC)}
    second = paper_factory(arxiv_id="2402.00002", title="Engines of analysis", **same)
    first = paper_factory(arxiv_id="2402.00001", title="Engines, revisited", **same)
    other = paper_factory(arxiv_id="2402.00003", title="Notes on numbers", **same)
    entries = citation_entries([second, other, first])
    assert [e.key for e in entries] == [
        "lovelace2024enginesb",
        "lovelace2024notes",
        "lovelace2024enginesa",
    ]
    keys = [e.key for e in parse_bibtex(to_bibtex(entries)).entries]
    assert len(set(keys)) == 3
    assert [e.key for e in citation_entries([first, second])] == [
        "lovelace2024enginesa",
        "lovelace2024enginesb",
    ]


def test_collaborations_stay_whole_and_long_bylines_end_with_others(paper_factory):
    names = ["ATLAS Collaboration", *[f"Author Number{i}" for i in range(AUTHORS_MAX + 5)]]
    paper = paper_factory(authors=names, title="A big detector")
    Authorship.objects.filter(paper=paper, position=1).update(is_person=False)
    (entry,) = citation_entries([paper])
    assert entry.more_authors and len(entry.authors) == AUTHORS_MAX
    (parsed,) = parse_bibtex(to_bibtex([entry])).entries
    author = parsed.fields_dict["author"].value
    assert author.startswith("{ATLAS Collaboration} and Number0") and author.endswith(" and others")
    assert entry.key == "atlas2024big"
    assert json.loads(to_csl_json([entry]))[0]["author"][0] == {"literal": "ATLAS Collaboration"}


def test_csl_json_renders_through_citeproc_with_title_and_authors(preprint, published):
    text = to_csl_json(citation_entries([preprint, published]))
    items = json.loads(text)
    assert items[0]["type"] == "article" and items[0]["number"] == "2401.00042"
    assert items[0]["archive"] == "arXiv" and items[0]["issued"] == {"date-parts": [[2024, 1, 3]]}
    assert items[1]["type"] == "article-journal" and items[1]["DOI"] == published.doi
    assert items[1]["container-title"] == published.journal_ref
    rendered = "\n".join(csl_bibliography(text))
    assert "Ørsted" in rendered and "Núñez" in rendered and "Lovelace" in rendered
    assert "Measuring things carefully" in rendered and "entropy of" in rendered


def test_ris_records_carry_type_authors_doi_and_arxiv_id(preprint, published):
    text = to_ris(citation_entries([preprint, published]))
    records = [r for r in text.split("ER  - ") if r.strip()]
    assert len(records) == 2 and text.count("\r\n") > 10
    first = records[0].strip().splitlines()
    assert first[0] == "TY  - GEN"
    assert "AU  - Ørsted, Émilie" in first and "AU  - Núñez, José" in first
    assert "AN  - arXiv:2401.00042" in first and "DB  - arXiv" in first
    assert "DA  - 2024/01/03/" in first and "UR  - https://arxiv.org/abs/2401.00042" in first
    second = records[1].strip().splitlines()
    assert second[0] == "TY  - JOUR"
    assert "DO  - 10.1103/PhysRevD.97.052003" in second
    assert "JO  - Phys. Rev. D 97, 052003 (2024)" in second and "PY  - 2024" in second


def test_ris_is_read_back_by_rispy_with_crlf_lines_and_no_record_numbers(paper_factory):
    paper = paper_factory(
        title="Two   DOIs\nand a line break",
        abstract="First line.\nSecond line.",
        doi="10.1086/520497 10.1088/0004-637X/704/2/1743",
    )
    text = to_ris(citation_entries([paper]), note="Cut at 1 paper.")
    assert text.startswith("TY  - JOUR\r\n") and text.endswith("ER  - \r\n")
    assert "\n" not in text.replace("\r\n", "")  # every line ends CR LF, no bare LF
    (record,) = rispy.loads(text)
    assert record["title"] == "Two DOIs and a line break"
    assert record["abstract"] == "First line. Second line."
    assert record["doi"] == "10.1086/520497"
    assert record["notes"] == ["Also DOI 10.1088/0004-637X/704/2/1743", "Cut at 1 paper."]
    assert record["accession_number"] == f"arXiv:{paper.arxiv_id}"


@pytest.mark.parametrize(
    ("extension", "content_type"),
    [
        ("bib", "application/x-bibtex"),
        ("ris", "application/x-research-info-systems"),
        ("json", "application/vnd.citationstyles.csl+json"),
    ],
)
def test_paper_export_is_a_download_in_two_queries(client, preprint, extension, content_type):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/papers/2401.00042/cite.{extension}")
    assert response.status_code == 200
    assert response["Content-Type"] == f"{content_type}; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="arxiv-2401.00042.{extension}"'
    assert "public" in response["Cache-Control"]
    assert len(queries) == 2
    assert "Ørsted" in response.content.decode()


def test_paper_export_of_a_paper_we_do_not_hold_is_404(client, db):
    assert client.get("/papers/2401.99999/cite.bib").status_code == 404


def test_researcher_export_is_their_papers_newest_first_cut_at_the_stated_bound(
    client, paper_factory, settings, monkeypatch
):
    from researchers import views as researcher_views

    ada = Researcher.objects.create(display_name="Ada Lovelace", name_key=name_key("Ada Lovelace"))
    papers = [
        paper_factory(title=f"Paper {word}", published=datetime(2020 + i, 1, 1, tzinfo=UTC))
        for i, word in enumerate(["alpha", "beta", "gamma"])
    ]
    for paper in papers:
        Authorship.objects.filter(paper=paper, position=1).update(researcher=ada)
    monkeypatch.setattr(researcher_views, "CITATION_EXPORT_MAX", 2)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/researchers/{ada.pk}/cite.bib")
    assert response.status_code == 200
    assert len(queries) <= 4  # the researcher (and a merge), the papers, their names
    text = response.content.decode()
    titles = [e.fields_dict["title"].value for e in parse_bibtex(text).entries]
    assert titles == ["Paper gamma", "Paper beta"]
    assert text.startswith("% The newest 2 papers of Ada Lovelace")
    assert response["X-Export-Note"].startswith("The newest 2 papers")
    assert response["Content-Disposition"] == f'attachment; filename="researcher-{ada.pk}.bib"'


def test_search_export_holds_the_search_pages_papers(client, paper_factory):
    paper_factory(title="Quaternion algebras", arxiv_id="2401.00777")
    paper_factory(title="Unrelated topology")
    response = client.get("/search/cite.json", {"q": "quaternion", "mode": "keyword"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.citationstyles.csl+json")
    items = json.loads(response.content)
    assert [item["number"] for item in items] == ["2401.00777"]
    assert client.get("/search/cite.bib").content.decode() == ""


def test_pages_link_to_their_exports(client, preprint):
    ada = Researcher.objects.create(display_name="Ada Lovelace", name_key=name_key("Ada Lovelace"))
    Authorship.objects.filter(paper=preprint, position=1).update(researcher=ada)
    page = client.get(preprint.get_absolute_url()).content.decode()
    assert 'href="/papers/2401.00042/cite.bib"' in page
    assert 'href="/papers/2401.00042/cite.json"' in page
    page = client.get(ada.get_absolute_url()).content.decode()
    assert f'href="/researchers/{ada.pk}/cite.ris"' in page
    page = client.get("/search", {"q": "entropy", "mode": "keyword"}).content.decode()
    assert 'href="/search/cite.bib?q=entropy&amp;mode=keyword"' in page


def test_old_style_ids_and_versioned_urls_reach_the_paper(client, paper_factory):
    paper_factory(arxiv_id="math.GT/0309136", title="Knots", categories=["math.GT"])
    response = client.get("/papers/math.GT/0309136v2/cite.bib")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="arxiv-math.GT-0309136.bib"'
    (entry,) = parse_bibtex(response.content.decode()).entries
    assert entry.fields_dict["eprint"].value == "math.GT/0309136"


# The official CSL-JSON schema (tests/fixtures/standards/PROVENANCE.md), read offline.
CSL_SCHEMA = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "standards" / "csl-data.json").read_text()
)


def csl_errors(items: list[dict]) -> list[str]:
    validator = jsonschema.Draft7Validator(CSL_SCHEMA)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(items)]


def test_the_csl_schema_check_can_fail():
    assert csl_errors([{"id": "x", "type": "preprint-ish", "author": [{"literal": 3}]}])


def test_csl_json_of_papers_with_math_accents_and_special_characters_conforms(
    paper_factory, preprint, published
):
    tricky = paper_factory(
        title=r"50% of {\beta} Pictoris b & $E_6/U(1)_N$ <b>bold</b> \"o",
        abstract=r"The $(\GL_n(\D),\GL_n(E))$ pairs, 1.265 {\mu}m & z~0.45 #1.",
        authors=["Paul Erdős", "ATLAS Collaboration", "Émilie du Châtelet"],
        doi="10.1086/520497 10.1088/0004-637X/704/2/1743",
        published=None,
    )
    undated = paper_factory(title="Undated", journal_ref="Nature 1, 2", published=None)
    text = to_csl_json(citation_entries([preprint, published, tricky, undated]))
    assert csl_errors(json.loads(text)) == []
    rendered = "\n".join(csl_bibliography(text))
    assert "Erdős" in rendered and "Pictoris b" in rendered


def test_csl_json_of_every_sample_title_conforms(sample_path):
    # Built from the bundled sample's records without the database: the writer is a pure
    # function of the entries.
    entries = []
    for number, line in enumerate(gzip.open(sample_path, "rt", encoding="utf-8")):
        record = json.loads(line)
        paper = Paper(
            arxiv_id=record["id"],
            title=record["title"],
            abstract=record["abstract"],
            doi=record["doi"] or "",
            journal_ref=record["journal-ref"] or "",
            categories=record["categories"],
        )
        authors = tuple(
            AuthorName(family=family, given=given) for family, given, *_ in record["authors_parsed"]
        )
        entries.append(CitationEntry(f"k{number}", paper, authors, more_authors=False))
    items = csl_items(entries)
    assert len(items) > 3000
    assert csl_errors(items) == []
