"""The daily lists' records, written in the snapshot's shape, are read by the real import."""

from __future__ import annotations

import gzip
import json
import subprocess

from benchmarks.daily_arxiv import latest_records, write_records
from papers.ingest.importing import snapshot_import
from papers.models import Paper

# A record as the repository's daily lists hold it (arXiv 2606.30776, abstract cut short);
# the categories as they come, an MSC code among them.
AUCTIONS = {
    "id": "2606.30776",
    "categories": ["cs.GT", "91B26 (Auctions, bargaining, bidding and selling)"],
    "pdf": "https://arxiv.org/pdf/2606.30776",
    "abs": "https://arxiv.org/abs/2606.30776",
    "authors": ["Batya Berzack", "Rotem Oshman", "Inbal Talgam-Cohen"],
    "title": "Optimal Auctions for Constrained Buyers",
    "comment": None,
    "summary": "We study multi-unit multi-buyer auctions, where buyers are subject to "
    "constraints that affect their bidding strategy.",
}


def _git(directory, *args):
    subprocess.run(["git", "-C", str(directory), *args], check=True, capture_output=True)


def _repository(tmp_path, days: dict[str, list[str]]):
    """A git repository whose branch `data` holds data/<day>.jsonl for each day."""
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "data")
    for day, lines in days.items():
        (repo / "data" / f"{day}.jsonl").write_text("\n".join(lines) + "\n")
    (repo / "data" / "2026-06-30_AI_enhanced_Chinese.jsonl").write_text(
        json.dumps({**AUCTIONS, "title": "not read"}) + "\n"
    )
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "days")
    return repo


def test_each_id_once_from_its_latest_day_and_bad_lines_set_aside(tmp_path, db):
    replaced = {**AUCTIONS, "title": "Optimal Auctions for Constrained Buyers (revised)"}
    repo = _repository(
        tmp_path,
        {
            "2026-06-29": [json.dumps(AUCTIONS), "{not json", json.dumps({"id": "2606.1"})],
            "2026-06-30": [json.dumps(replaced)],
        },
    )
    latest, set_aside = latest_records(repo, "data")

    assert list(latest) == ["2606.30776"]
    record = latest["2606.30776"]
    assert record["title"].endswith("(revised)")
    assert record["categories"] == "cs.GT"
    assert record["versions"] == [{"version": "v1", "created": "Tue, 30 Jun 2026 00:00:00 GMT"}]
    assert [reason.split(":")[0] for reason in set_aside] == [
        "data/2026-06-29.jsonl line 2",
        "data/2026-06-29.jsonl line 3",
    ]
    assert "no id, title or abstract" in set_aside[1]

    out = tmp_path / "more.jsonl.gz"
    write_records(list(latest.values()), out)
    with gzip.open(out, "rt") as handle:
        assert len(handle.read().splitlines()) == 1
    counts, _ = snapshot_import(out)
    assert counts.as_dict() == {"created": 1, "updated": 0, "unchanged": 0, "rejected": 0}
    paper = Paper.objects.get(arxiv_id="2606.30776")
    assert paper.title == "Optimal Auctions for Constrained Buyers (revised)"
    assert paper.primary_category == "cs.GT"
    assert paper.published.isoformat().startswith("2026-06-30")
    assert [a.name for a in paper.authorships.order_by("position")] == AUCTIONS["authors"]


def test_a_draw_is_seeded(tmp_path):
    records = [{**AUCTIONS, "id": f"2606.{n:05d}"} for n in range(50)]
    first = write_records(records, tmp_path / "a.jsonl.gz", 10)
    again = write_records(records, tmp_path / "b.jsonl.gz", 10)
    assert len(first) == 10 and first == again
    assert first != records[:10]
