"""The bulk paths of papers_upsert (COPY on PostgreSQL, bulk_create elsewhere) and the parsing
shortcuts the import relies on; each must give exactly what the plain path gives."""

from __future__ import annotations

import gzip
import json
from email.utils import parsedate_to_datetime

import pytest
from slugify import slugify

from papers.authors import decode_tex
from papers.ingest.importing import in_background, snapshot_import
from papers.ingest.records import RecordError, clean_text
from papers.ingest.records import parse_version_date as _parse_version_date
from papers.ingest.snapshot import decode_byline, parse_snapshot_line
from papers.ingest.upsert import _paper_values, _papers_insert_new, paper_slug, papers_upsert
from papers.models import Authorship, Paper, PaperCategory


@pytest.fixture
def records(fixtures_dir):
    lines = (fixtures_dir / "arxiv-snapshot" / "first200.jsonl").read_text().splitlines()
    return [parse_snapshot_line(line) for line in lines]


def _stored(paper: Paper) -> dict:
    return {
        "categories": list(
            paper.category_links.order_by("-is_primary", "code").values_list(
                "code", "is_primary", "published"
            )
        ),
        "authorships": list(
            paper.authorships.order_by("position").values_list(
                "position", "name", "keyname", "forenames", "suffix", "affiliation", "researcher_id"
            )
        ),
    }


def test_new_papers_are_stored_exactly_as_the_record_says(records, db):
    counts, ids = papers_upsert(records[:50])
    assert counts.as_dict() == {"created": 50, "updated": 0, "unchanged": 0, "rejected": 0}
    papers = {p.pk: p for p in Paper.objects.filter(pk__in=ids)}
    assert [papers[pk].arxiv_id for pk in ids] == [r.arxiv_id for r in records[:50]]
    for pk, record in zip(ids, records[:50], strict=True):
        paper = papers[pk]
        expected = _paper_values(record, record.digest())
        assert {name: getattr(paper, name) for name in expected} == expected
        assert paper.created_at is not None and paper.modified_at is not None
        assert list(
            paper.category_links.order_by("-is_primary", "id").values_list(
                "code", "is_primary", "published"
            )
        ) == [
            (code, index == 0, record.published)
            for index, code in enumerate(dict.fromkeys(record.categories))
        ]
        assert list(
            paper.authorships.order_by("position").values_list(
                "position", "name", "keyname", "forenames", "researcher_id"
            )
        ) == [
            (position, a.display, a.keyname, a.forenames, None)
            for position, a in enumerate(record.authors, start=1)
        ]


def test_batch_of_new_changed_and_unchanged_papers(records, db):
    """Runs on both vendors with the same expectations: on PostgreSQL the new paper goes
    through COPY and the changed one through ON CONFLICT, in one batch."""
    from researchers.models import Researcher

    first, second, third = records[0], records[1], records[2]
    papers_upsert([first, second])
    researcher = Researcher.objects.create(display_name="Ileana Streinu")
    Authorship.objects.filter(paper__arxiv_id=second.arxiv_id).update(
        researcher=researcher, match_confidence=1.0, match_method="exact"
    )
    second_pk = Paper.objects.get(arxiv_id=second.arxiv_id).pk

    changed = parse_snapshot_line(
        json.dumps(
            {
                "id": second.arxiv_id,
                "title": "Sparsity-certifying graph decompositions, revised",
                "categories": "cs.CG math.CO",
                "authors": "Ileana Streinu and Audrey Lee",
                "authors_parsed": [["Streinu", "Ileana", ""], ["Lee", "Audrey", ""]],
                "versions": [
                    {"version": "v1", "created": "Sat, 31 Mar 2007 02:26:18 GMT"},
                    {"version": "v3", "created": "Mon, 5 Jan 2009 10:00:00 GMT"},
                ],
            }
        )
    )
    counts, ids = papers_upsert([third, first, changed])
    assert counts.as_dict() == {"created": 1, "updated": 1, "unchanged": 1, "rejected": 0}
    third_pk = Paper.objects.get(arxiv_id=third.arxiv_id).pk
    assert ids == [third_pk, second_pk]
    assert Paper.objects.count() == 3

    revised = Paper.objects.get(pk=second_pk)
    assert revised.title == "Sparsity-certifying graph decompositions, revised"
    assert revised.version == 3
    assert revised.primary_category == "cs.CG"
    assert list(revised.category_links.order_by("code").values_list("code", "is_primary")) == [
        ("cs.CG", True),
        ("math.CO", False),
    ]
    # The position whose name changed loses its match, and how sure that match was with it.
    assert list(
        revised.authorships.order_by("position").values_list(
            "name", "researcher_id", "match_confidence", "match_method"
        )
    ) == [("Ileana Streinu", researcher.pk, 1.0, "exact"), ("Audrey Lee", None, None, "")]

    created = _stored(Paper.objects.get(pk=third_pk))
    assert created["authorships"] == [
        (position, a.display, a.keyname, a.forenames, a.suffix, a.affiliation, None)
        for position, a in enumerate(third.authors, start=1)
    ]
    assert [c[0] for c in created["categories"]] == third.categories

    # And once more: nothing left to do.
    counts, ids = papers_upsert([third, first, changed])
    assert counts.as_dict() == {"created": 0, "updated": 0, "unchanged": 3, "rejected": 0}
    assert ids == []


def test_rows_created_after_a_bulk_import_get_fresh_ids(records, db, paper_factory):
    """The COPY path reserves paper ids from the sequence; the ORM must not collide later."""
    papers_upsert(records[:20])
    paper = paper_factory()
    assert paper.pk not in set(Paper.objects.exclude(pk=paper.pk).values_list("pk", flat=True))
    author = Authorship.objects.filter(paper=paper).first()
    assert Authorship.objects.filter(pk=author.pk).count() == 1
    assert PaperCategory.objects.filter(paper=paper).count() == 1


@pytest.mark.postgres
def test_copy_path_falls_back_when_another_writer_inserted_the_paper(records, db):
    """A paper that appears between the existence check and the COPY (a concurrent harvest)
    makes the COPY fail on the unique constraint; the batch then takes the ON CONFLICT path."""
    from researchers.models import Researcher

    original = records[1]
    papers_upsert([original])
    researcher = Researcher.objects.create(display_name="Ileana Streinu")
    Authorship.objects.filter(paper__arxiv_id=original.arxiv_id, position=1).update(
        researcher=researcher
    )
    revised = parse_snapshot_line(
        json.dumps(
            {
                "id": original.arxiv_id,
                "title": "Revised",
                "categories": "cs.CG",
                "authors": "Ileana Streinu",
                "authors_parsed": [["Streinu", "Ileana", ""]],
            }
        )
    )
    fresh = records[5]
    digests = {r.arxiv_id: r.digest() for r in (revised, fresh)}
    pks, created = _papers_insert_new([revised, fresh], digests)
    assert set(pks) == {original.arxiv_id, fresh.arxiv_id}
    assert created is False  # one of them was an update: their records are not the papers
    paper = Paper.objects.get(arxiv_id=original.arxiv_id)
    assert pks[original.arxiv_id] == paper.pk
    assert paper.title == "Revised"
    assert list(paper.category_links.values_list("code", flat=True)) == ["cs.CG"]
    assert list(paper.authorships.values_list("name", "researcher_id")) == [
        ("Ileana Streinu", researcher.pk)
    ]
    assert Paper.objects.filter(arxiv_id=fresh.arxiv_id).count() == 1
    assert Authorship.objects.filter(paper__arxiv_id=fresh.arxiv_id).count() == len(fresh.authors)


def test_version_dates_read_like_email_utils(sample_path):
    dates = [
        v["created"]
        for line in gzip.open(sample_path, "rt", encoding="utf-8")
        for v in json.loads(line)["versions"]
    ]
    dates += [
        "Mon, 2 Apr 2007 19:18:42 +0100",
        "2 Apr 2007 19:18:42 GMT",
        "Mon, 02 Apr 2007 09:08:07 GMT",
    ]
    assert len(dates) > 3000
    for value in dates:
        assert _parse_version_date(value) == parsedate_to_datetime(value), value
        assert _parse_version_date(value).utcoffset() == parsedate_to_datetime(value).utcoffset()
    with pytest.raises(RecordError):
        _parse_version_date("Mon, 31 Feb 2007 19:18:42 GMT")


def test_slugs_are_python_slugify_s(sample_path):
    """paper_slug's fast path for ASCII titles gives python-slugify's slug, title by title."""
    titles = [
        clean_text(json.loads(line)["title"])
        for line in gzip.open(sample_path, "rt", encoding="utf-8")
    ]
    titles += [
        "Don't stop: 1,000 and 2,5 things",  # quotes and commas between digits go
        "T'he 'quo'ted', 1,2,3 -- a--b  c",
        "A" * 79 + " b",  # the 80-character cut at a word boundary, around its edges
        "A" * 80 + " b",
        "ab " + "c" * 78,
        "x" * 81,
        "word " * 30,
        "'''",  # nothing left: "paper"
        "C++ and C# of $\\alpha$_{1}",
        "R&D &amp; more",  # entities: python-slugify itself
        "Über die Größe",  # not ASCII: python-slugify itself
    ]
    assert len(titles) > 3000
    for title in titles:
        assert paper_slug(title) == (slugify(title, max_length=80, word_boundary=True) or "paper")


def test_bylines_decode_name_by_name_as_in_one_piece(sample_path):
    bylines = [
        clean_text(json.loads(line)["authors"])
        for line in gzip.open(sample_path, "rt", encoding="utf-8")
    ]
    with_tex = [b for b in bylines if "\\" in b or "{" in b]
    assert len(with_tex) > 50
    for byline in bylines:
        assert decode_byline(byline) == decode_tex(byline), byline
    assert decode_byline('A. {Smith, Jr.}, B. G\\"odel') == decode_tex(
        'A. {Smith, Jr.}, B. G\\"odel'
    )
    assert decode_byline("A. $x, y$ B\\'a") == decode_tex("A. $x, y$ B\\'a")


def test_malformed_author_entry_is_rejected_not_fatal(tmp_path, records, db):
    good = json.dumps(
        {
            "id": "0704.0002",
            "title": "T",
            "categories": "cs.LG",
            "authors_parsed": [["Theran", None, ""]],
        }
    )
    bad = json.dumps(
        {
            "id": "0704.0003",
            "title": "T",
            "categories": "cs.LG",
            "authors_parsed": [["Theran", 5, ""]],
        }
    )
    path = tmp_path / "s.jsonl"
    path.write_text(good + "\n" + bad + "\n")
    counts, _ = snapshot_import(path)
    assert (counts.created, counts.rejected) == (1, 1)
    assert Authorship.objects.get(paper__arxiv_id="0704.0002").name == "Theran"


def test_background_reader_hands_over_items_and_errors():
    assert list(in_background(iter(range(50)), depth=2)) == list(range(50))

    def failing():
        yield 1
        raise OSError("disk gone")

    reader = in_background(failing())
    assert next(reader) == 1
    with pytest.raises(OSError, match="disk gone"):
        next(reader)


def test_background_reader_stops_when_the_consumer_stops():
    produced = []

    def items():
        for n in range(10_000):
            produced.append(n)
            yield n

    reader = in_background(items(), depth=2)
    assert next(reader) == 0
    reader.close()
    assert len(produced) < 10


def test_digest_moves_with_every_field(records):
    """A field left out of the digest would make a real change count as "unchanged"."""
    import dataclasses
    from datetime import UTC, date, datetime

    from papers.authors import AuthorName

    record = next(r for r in records if r.authors and r.published and r.updated)
    base = record.digest()
    assert base == dataclasses.replace(record).digest()  # stable for equal records
    changed_values = {
        "arxiv_id": "0704.9999",
        "authors": [*record.authors, AuthorName(keyname="Extra")],
        "categories": [*record.categories, "math.CO"],
        "version": record.version + 1,
        "published": datetime(1999, 1, 1, tzinfo=UTC),
        "updated": date(1999, 1, 2),
        "is_deleted": not record.is_deleted,
    }
    for field in dataclasses.fields(record):
        value = changed_values.get(field.name)
        if value is None:
            value = getattr(record, field.name) + " (revised)"
        assert dataclasses.replace(record, **{field.name: value}).digest() != base, field.name
    for part in ("keyname", "forenames", "suffix", "affiliation"):
        author = record.authors[0]._replace(**{part: getattr(record.authors[0], part) + "x"})
        revised = dataclasses.replace(record, authors=[author, *record.authors[1:]])
        assert revised.digest() != base, part
