"""The synthetic snapshot must be read by the real parser exactly like a real one."""

from __future__ import annotations

import gzip
import json
import re
from email.utils import parsedate_to_datetime

from benchmarks.generate_snapshot import MAX_AUTHORS, write_snapshot
from papers.ingest.importing import snapshot_import
from papers.ingest.snapshot import parse_snapshot_line
from papers.models import Authorship, Paper
from wovepaper.lib.identifiers import ARXIV_NEW_STYLE

COUNT = 400


def _lines(path):
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()


def test_lines_have_the_real_snapshot_shape(tmp_path, fixtures_dir):
    real = json.loads(
        (fixtures_dir / "arxiv-snapshot" / "first200.jsonl").read_text().splitlines()[0]
    )
    path = tmp_path / "s.jsonl.gz"
    stats = write_snapshot(path, COUNT, seed=7, progress=False)
    lines = _lines(path)
    assert stats["records"] == len(lines) == COUNT
    ids = set()
    for line in lines:
        data = json.loads(line)
        assert list(data) == list(real)
        assert re.fullmatch(ARXIV_NEW_STYLE, data["id"])
        ids.add(data["id"])
        assert 1 <= len(data["authors_parsed"]) <= MAX_AUTHORS
        assert 1 <= len(data["categories"].split()) <= 4
        assert 1 <= len(data["versions"]) <= 3
        for version in data["versions"]:
            parsedate_to_datetime(version["created"])
        record = parse_snapshot_line(line)
        assert record.arxiv_id == data["id"]
        assert record.title and record.abstract
        # The byline lists the same people as authors_parsed, in the same order.
        assert record.authors_raw.replace(" and ", ", ").split(", ") == [
            a.display for a in record.authors
        ]
    assert len(ids) == COUNT
    assert any("\\" in json.loads(line)["authors"] for line in lines)


def test_same_seed_same_file_other_seed_other_file(tmp_path):
    a, b, c = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz", tmp_path / "c.jsonl.gz"
    write_snapshot(a, 50, seed=1, progress=False)
    write_snapshot(b, 50, seed=1, progress=False)
    write_snapshot(c, 50, seed=2, progress=False)
    assert _lines(a) == _lines(b)
    assert _lines(a) != _lines(c)


def test_generated_snapshot_imports_and_reruns_unchanged(tmp_path, db):
    path = tmp_path / "s.jsonl.gz"
    stats = write_snapshot(path, 150, seed=3, progress=False)
    counts, _ = snapshot_import(path, batch_size=64)
    assert counts.as_dict() == {"created": 150, "updated": 0, "unchanged": 0, "rejected": 0}
    assert Authorship.objects.count() == stats["authorships"]
    counts, changed = snapshot_import(path, batch_size=64)
    assert counts.unchanged == 150 and changed == []
    assert Paper.objects.count() == 150
