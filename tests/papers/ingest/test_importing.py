from __future__ import annotations

import gzip
import json
from datetime import UTC, date, datetime

import pytest

from papers.ingest.importing import snapshot_import
from papers.ingest.records import RecordError
from papers.ingest.snapshot import parse_snapshot_line
from papers.models import Authorship, Paper, PaperCategory, RejectedRecord

CORPUS_LINES = 200


def _write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def snapshot_lines(fixtures_dir):
    return (fixtures_dir / "arxiv-snapshot" / "first200.jsonl").read_text().splitlines()


def test_parse_real_line_field_by_field(snapshot_lines):
    record = parse_snapshot_line(snapshot_lines[0])
    assert record.arxiv_id == "0704.0001"
    assert record.title.startswith("Calculation of prompt diphoton production cross sections")
    assert "\n" not in record.title
    assert record.categories == ["hep-ph"]
    assert record.version == 2
    assert record.published == datetime(2007, 4, 2, 19, 18, 42, tzinfo=UTC)
    assert record.updated == date(2008, 11, 26)
    assert record.doi == "10.1103/PhysRevD.76.013009"
    assert record.journal_ref == "Phys.Rev.D76:013009,2007"
    assert record.report_no == "ANL-HEP-PR-07-12"
    assert [a.display for a in record.authors] == [
        "C. Balázs",
        "E. L. Berger",
        "P. M. Nadolsky",
        "C. -P. Yuan",
    ]
    assert record.authors_raw == "C. Balázs, E. L. Berger, P. M. Nadolsky, C.-P. Yuan"


def test_import_creates_papers_authorships_and_categories(tmp_path, snapshot_lines, db):
    path = _write_lines(tmp_path / "s.jsonl", snapshot_lines)
    counts, changed = snapshot_import(path, batch_size=64)
    assert counts.as_dict() == {
        "created": CORPUS_LINES,
        "updated": 0,
        "unchanged": 0,
        "rejected": 0,
    }
    assert len(changed) == CORPUS_LINES
    paper = Paper.objects.get(arxiv_id="0704.0002")
    assert paper.title == "Sparsity-certifying Graph Decompositions"
    assert paper.categories == "math.CO cs.CG"
    assert paper.primary_category == "math.CO"
    assert paper.slug == "sparsity-certifying-graph-decompositions"
    assert list(paper.authorships.values_list("position", "name")) == [
        (1, "Ileana Streinu"),
        (2, "Louis Theran"),
    ]
    assert set(PaperCategory.objects.filter(paper=paper).values_list("code", "is_primary")) == {
        ("math.CO", True),
        ("cs.CG", False),
    }
    expected_authorships = sum(len(json.loads(line)["authors_parsed"]) for line in snapshot_lines)
    assert Authorship.objects.count() == expected_authorships


@pytest.mark.postgres
def test_a_first_load_leaves_the_planner_statistics_of_what_it_wrote(tmp_path, snapshot_lines, db):
    from django.db import connection

    path = _write_lines(tmp_path / "s.jsonl", snapshot_lines)
    snapshot_import(path, batch_size=64)
    tables = {m._meta.db_table: m for m in (Paper, Authorship, PaperCategory)}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, reltuples FROM pg_class WHERE relname = ANY(%s)", [list(tables)]
        )
        estimated = dict(cursor.fetchall())
    # Never analysed, a table's reltuples is -1 and the planner guesses its rows.
    assert estimated == {t: model.objects.count() for t, model in tables.items()}


def test_rerun_is_idempotent(tmp_path, snapshot_lines, db):
    path = _write_lines(tmp_path / "s.jsonl", snapshot_lines)
    snapshot_import(path)
    before = (Paper.objects.count(), Authorship.objects.count(), PaperCategory.objects.count())
    counts, changed = snapshot_import(path)
    assert counts.as_dict() == {
        "created": 0,
        "updated": 0,
        "unchanged": CORPUS_LINES,
        "rejected": 0,
    }
    assert changed == []
    after = (Paper.objects.count(), Authorship.objects.count(), PaperCategory.objects.count())
    assert after == before


def test_gzipped_snapshot_is_read(tmp_path, snapshot_lines, db):
    path = tmp_path / "s.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(snapshot_lines[:10]) + "\n")
    counts, _ = snapshot_import(path)
    assert counts.created == 10


def test_malformed_lines_are_set_aside_and_the_rest_goes_on(tmp_path, snapshot_lines, db):
    good = snapshot_lines[:3]
    no_title = json.loads(snapshot_lines[3])
    no_title["title"] = "  "
    bad_id = json.loads(snapshot_lines[4])
    bad_id["id"] = "not-an-id"
    lines = [
        good[0],
        "{not json",
        good[1],
        json.dumps(no_title),
        json.dumps(bad_id),
        "[1, 2]",
        good[2],
    ]
    path = _write_lines(tmp_path / "bad.jsonl", lines)
    counts, _ = snapshot_import(path)
    assert counts.created == 3
    assert counts.rejected == 4
    rejected = {r.record_key: r.reason for r in RejectedRecord.objects.all()}
    assert set(rejected) == {"line 2", "line 4", "line 5", "line 6"}
    assert "invalid JSON" in rejected["line 2"]
    assert "empty title" in rejected["line 4"]
    assert "not an arXiv identifier" in rejected["line 5"]
    # A rerun records the same rejections once, not twice.
    snapshot_import(path)
    assert RejectedRecord.objects.count() == 4


def test_json_the_standard_library_reads_still_reads(snapshot_lines):
    """orjson refuses NaN, which json.loads (the parser before it) accepts: such a line must
    not become a rejection."""
    line = snapshot_lines[0][:-1] + ', "x-score": NaN}'
    assert parse_snapshot_line(line).arxiv_id == "0704.0001"
    with pytest.raises(RecordError, match="invalid JSON: Expecting value at column 1"):
        parse_snapshot_line("NaX")


def test_first_load_with_a_paper_repeated_in_a_later_batch(tmp_path, snapshot_lines, db):
    """A first import COPYs batches without looking for stored papers; a line whose paper an
    earlier batch stored must still update it (or leave it alone), not fail the import."""
    revised = json.loads(snapshot_lines[1])
    revised["title"] = "Sparsity-certifying graph decompositions, revised"
    lines = [*snapshot_lines[:4], json.dumps(revised), snapshot_lines[2]]
    counts, changed = snapshot_import(_write_lines(tmp_path / "s.jsonl", lines), batch_size=2)
    assert counts.as_dict() == {"created": 4, "updated": 1, "unchanged": 1, "rejected": 0}
    paper = Paper.objects.get(arxiv_id="0704.0002")
    assert paper.title == "Sparsity-certifying graph decompositions, revised"
    assert Paper.objects.count() == 4
    assert changed.count(paper.pk) == 2  # created, then changed
    assert list(paper.authorships.values_list("position", "name")) == [
        (1, "Ileana Streinu"),
        (2, "Louis Theran"),
    ]


def test_new_version_updates_fields_and_keeps_unchanged_matches(
    tmp_path, snapshot_lines, db, django_user_model
):
    from researchers.models import Researcher

    original = json.loads(snapshot_lines[1])  # 0704.0002, Streinu and Theran
    path = _write_lines(tmp_path / "v1.jsonl", [json.dumps(original)])
    snapshot_import(path)
    researcher = Researcher.objects.create(display_name="Ileana Streinu")
    other = Researcher.objects.create(display_name="Louis Theran")
    Authorship.objects.filter(paper__arxiv_id="0704.0002", position=1).update(researcher=researcher)
    Authorship.objects.filter(paper__arxiv_id="0704.0002", position=2).update(researcher=other)

    revised = dict(original)
    revised["title"] = "Sparsity-certifying graph decompositions, revised"
    revised["categories"] = "math.CO"
    revised["versions"] = original["versions"] + [
        {"version": "v3", "created": "Mon, 5 Jan 2009 10:00:00 GMT"}
    ]
    revised["authors"] = "Ileana Streinu and Someone Else and Louis Theran"
    revised["authors_parsed"] = [
        ["Streinu", "Ileana", ""],
        ["Else", "Someone", ""],
        ["Theran", "Louis", ""],
    ]
    counts, _ = snapshot_import(_write_lines(tmp_path / "v3.jsonl", [json.dumps(revised)]))
    assert counts.updated == 1
    paper = Paper.objects.get(arxiv_id="0704.0002")
    assert paper.version == 3
    assert paper.title == "Sparsity-certifying graph decompositions, revised"
    assert list(paper.category_links.values_list("code", flat=True)) == ["math.CO"]
    rows = list(paper.authorships.order_by("position").values_list("name", "researcher_id"))
    assert rows == [
        ("Ileana Streinu", researcher.pk),
        ("Someone Else", None),
        ("Louis Theran", None),
    ]


def test_bundled_sample_imports(sample_path, db):
    counts, _ = snapshot_import(sample_path)
    assert counts.rejected == 0
    assert counts.created >= 2000
    assert Paper.objects.filter(published__isnull=True).count() == 0


def test_lines_are_read_as_bytes_with_the_text_readers_outcome(tmp_path, snapshot_lines, db):
    """The import hands orjson each line's bytes: a line that is not valid UTF-8 is still read
    with replacement characters, Windows line ends and blank lines change nothing, and a
    rejected line is logged as text under its own line number."""
    broken = json.loads(snapshot_lines[0])
    broken["title"] = "Caf\udce9 physics"  # stands for a Latin-1 byte, replaced below
    raw = json.dumps(broken, ensure_ascii=False).encode("utf-8", errors="surrogateescape")
    assert raw.count(b"\xe9") == 1 and b"Caf\xe9" in raw
    body = b"\r\n".join([raw, b"", snapshot_lines[1].encode(), '{"id": "n\u00e9"'.encode()])
    path = tmp_path / "bytes.jsonl"
    path.write_bytes(body + b"\r\n")
    counts, _ = snapshot_import(path)
    assert (counts.created, counts.rejected) == (2, 1)
    assert Paper.objects.get(arxiv_id="0704.0001").title == "Caf\ufffd physics"
    rejected = RejectedRecord.objects.get()
    assert rejected.record_key == "line 4"
    assert rejected.raw.startswith('{"id": "n\u00e9"')


# The glued TeX of the bundled sample's bylines ("S\\lawianowski": TeX without the space it
# needs), decoded by hand, as the OAI test's pages of the same papers give them.
GLUED_TEX_NAMES = {
    "S\\lawianowski": "Sławianowski",
    "Go\\lubowska": "Gołubowska",
    "Ak\\incı": "Akıncı",
    "Garc\\ia-Ripoll": "Garcıa-Ripoll",
    "Garc\\ia": "Garcıa",
    "Ar\\ik": "Arık",
    "Lefran\\ccois": "Lefrançois",
    "Pila\\vr": "Pilař",
    "Y\\ilmaz": "Yılmaz",
}


def test_names_and_submitters_in_tex_read_as_the_oai_records_read_them(sample_path):
    """Both sources read a name by one rule (papers.authors.decode_name): the snapshot kept
    "S" of "S\\lawianowski" (an unknown macro, dropped with the letters) and wrote the
    submitter's TeX as it came ("Jes\\'us Ma\\'iz Apell\\'aniz")."""
    glued_seen: dict[str, str] = {}
    submitters_in_tex = 0
    with gzip.open(sample_path, "rt", encoding="utf-8") as lines:
        for line in lines:
            raw = json.loads(line)
            record = parse_snapshot_line(line)
            for (keyname, *_), author in zip(raw["authors_parsed"], record.authors, strict=False):
                if keyname in GLUED_TEX_NAMES:
                    glued_seen[keyname] = author.keyname
            if "\\" in (raw.get("submitter") or ""):
                submitters_in_tex += 1
                assert "\\" not in record.submitter and "{" not in record.submitter
            assert "\\" not in record.authors_raw or "$" in record.authors_raw
    assert glued_seen == GLUED_TEX_NAMES
    assert submitters_in_tex >= 30
    jesus = parse_snapshot_line(
        json.dumps(
            {
                "id": "1302.9999",
                "submitter": "Jes\\'us Ma\\'iz Apell\\'aniz",
                "authors": "O. Y\\ilmaz and S. Lefran\\ccois",
                "title": "A title",
                "abstract": "An abstract.",
                "categories": "astro-ph.SR",
                "versions": [{"version": "v1", "created": "Mon, 4 Feb 2013 10:00:00 GMT"}],
            }
        )
    )
    assert jesus.submitter == "Jesús Maíz Apellániz"
    assert jesus.authors_raw == "O. Yılmaz and S. Lefrançois"
    assert [a.keyname for a in jesus.authors] == ["Yılmaz", "Lefrançois"]
