"""Citations from OpenAlex snapshot files (papers.citations.files): recorded OpenAlex works
(the work of arXiv 2108.04680, and a list answer of 50 works, one of them YOLOv7, arXiv
2207.02696 by its arxiv.org location) written one a line as the snapshot holds them, with lines
that are not works among them. The rows are the API path's, dated as of the snapshot."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

from papers.citations.fetch import citations_fetch
from papers.citations.files import openalex_works_file_load
from papers.models import Citation, CitationCoverage, RejectedRecord
from tests.sources.conftest import load

from .test_citation_fetch import FETCHED, OPENALEX_WORK, recorded  # noqa: F401

pytestmark = pytest.mark.django_db

AS_OF = datetime(2025, 11, 24, tzinfo=UTC)
LIST_ANSWER = load("openalex/works_from_publication_date_2023-01-01_page1.json")["results"]
NOT_WORKS = [b"{not json", b"[1, 2]", b'{"display_name": "no id"}', b'{"id": "W1", "locations": 7}']


@pytest.fixture
def snapshot(tmp_path):
    """A snapshot part: the recorded works one a line, gzipped, with four lines that are not
    works (lines 2, 4, 6 and 8) and a blank line."""
    lines = [json.dumps(OPENALEX_WORK).encode()]
    for bad, work in zip(NOT_WORKS, LIST_ANSWER, strict=False):
        lines += [bad, json.dumps(work).encode()]
    lines += [b""] + [json.dumps(w).encode() for w in LIST_ANSWER[len(NOT_WORKS) :]]
    path = tmp_path / "part_000.gz"
    path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    return path


def _rows(paper) -> list[tuple]:
    return sorted(
        Citation.objects.filter(citing_paper=paper, source="openalex").values_list(
            "cited_key", "cited_openalex_id", "cited_paper_id"
        )
    )


def test_archive_papers_among_the_works_get_their_references_and_the_rest_is_set_aside(
    snapshot, paper_factory
):
    vit_like = paper_factory(arxiv_id="2108.04680")
    yolo = paper_factory(arxiv_id="2207.02696")
    paper_factory(arxiv_id="2401.00001")  # not in the file: nothing said of it

    result = openalex_works_file_load(snapshot, as_of=AS_OF)

    assert (result.works, result.archive_papers, result.set_aside) == (51, 2, 4)
    assert Citation.objects.filter(citing_paper=vit_like, source="openalex").count() == 49
    yolo_work = next(w for w in LIST_ANSWER if "2207.02696" in json.dumps(w.get("locations")))
    assert Citation.objects.filter(citing_paper=yolo, source="openalex").count() == len(
        set(yolo_work["referenced_works"])
    )
    assert result.edges == Citation.objects.count()
    coverage = CitationCoverage.objects.get(paper=vit_like, source="openalex")
    assert coverage.fetched_at == AS_OF and coverage.counts_by_year == [[2023, 2]]
    assert CitationCoverage.objects.count() == 2
    set_aside = RejectedRecord.objects.filter(source="openalex-snapshot:part_000.gz")
    assert sorted(set_aside.values_list("record_key", flat=True)) == [
        "line 2",
        "line 4",
        "line 6",
        "line 8",
    ]
    assert "not a work" in set_aside.get(record_key="line 6").reason


def test_a_rerun_writes_the_same_rows(snapshot, paper_factory):
    paper = paper_factory(arxiv_id="2108.04680")
    openalex_works_file_load(snapshot, as_of=AS_OF)
    first = _rows(paper)
    again = openalex_works_file_load(snapshot, as_of=AS_OF)
    assert _rows(paper) == first and again.edges == len(first)
    assert RejectedRecord.objects.count() == 4


def test_the_file_and_the_api_write_the_same_rows(recorded, snapshot, paper_factory):  # noqa: F811
    paper = paper_factory(arxiv_id="2108.04680")
    citations_fetch([paper.pk], now=FETCHED)
    from_api = _rows(paper)
    assert len(from_api) == 49

    openalex_works_file_load(snapshot, as_of=AS_OF)

    # Replaced under the same keys, never doubled; dated as of the snapshot now.
    assert _rows(paper) == from_api
    assert CitationCoverage.objects.get(paper=paper, source="openalex").fetched_at == AS_OF


def test_the_command_says_what_it_loaded_and_refuses_a_bad_date(snapshot, paper_factory, capsys):
    paper_factory(arxiv_id="2108.04680")
    call_command("load_citations", "--openalex-works", str(snapshot), "--as-of", "2025-11-24")
    out = capsys.readouterr().out
    assert "51 works, 1 of them papers here, 49 references written, 4 lines set aside" in out
    with pytest.raises(CommandError, match="--as-of"):
        call_command("load_citations", "--openalex-works", str(snapshot), "--as-of", "24/11/2025")
    with pytest.raises(CommandError, match="no such file"):
        call_command(
            "load_citations", "--openalex-works", "/nonexistent.gz", "--as-of", "2025-11-24"
        )
