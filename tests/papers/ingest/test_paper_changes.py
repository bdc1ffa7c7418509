"""What a harvest saw change on a paper already held (papers.models.PaperChange): a new
version, a withdrawal, a journal reference gained; read from real snapshot records."""

from __future__ import annotations

from dataclasses import replace

import pytest

from papers.ingest.snapshot import parse_snapshot_line
from papers.ingest.upsert import papers_upsert
from papers.models import Paper, PaperChange


@pytest.fixture
def records(fixtures_dir):
    lines = (fixtures_dir / "arxiv-snapshot" / "first200.jsonl").read_text().splitlines()
    return [parse_snapshot_line(line) for line in lines]


def _announcements(arxiv_id: str) -> list[str]:
    return [
        c.announcement
        for c in PaperChange.objects.filter(paper__arxiv_id=arxiv_id).order_by("kind")
    ]


def test_a_new_version_a_withdrawal_and_a_journal_reference_are_recorded_once(records, db):
    plain = next(r for r in records if not r.journal_ref and not r.is_withdrawn)
    published = next(r for r in records if r.journal_ref)
    papers_upsert([plain])
    assert not PaperChange.objects.exists()  # a new paper is news of its own kind
    revised = replace(
        plain,
        version=plain.version + 1,
        comments="This paper has been withdrawn by the author",
        journal_ref=published.journal_ref,
    )
    counts, _ = papers_upsert([revised])
    assert counts.updated == 1
    assert sorted(_announcements(plain.arxiv_id)) == sorted(
        [
            f"v{plain.version + 1} posted",
            "withdrawn",
            f"published in {published.journal_ref}",
        ]
    )
    # The same record again changes nothing, so nothing is announced twice.
    papers_upsert([revised])
    assert PaperChange.objects.count() == 3


def test_a_change_readers_are_not_told_of_records_nothing(records, db):
    plain = next(r for r in records if not r.journal_ref and not r.is_withdrawn)
    papers_upsert([plain])
    papers_upsert([replace(plain, title=plain.title + ", revised")])
    assert Paper.objects.get(arxiv_id=plain.arxiv_id).title.endswith(", revised")
    assert not PaperChange.objects.exists()
