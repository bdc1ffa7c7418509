"""Real arXiv records beyond the bundled sample, for measuring search by meaning in a larger
archive than 3,200 papers: the daily lists of the public repository
dw-dengwei/daily-arXiv-ai-enhanced (branch `data`, files `data/YYYY-MM-DD.jsonl`: arXiv's new
submissions of each day, mostly computer science, 2025-2026), written out in the shape of
arXiv's metadata snapshot, which `manage.py import_arxiv_snapshot` reads.
benchmarks/data/PROVENANCE.md says what the records are and the commit measured; nothing of
them is committed here.

    python benchmarks/daily_arxiv.py --git-dir <a clone of the repository> \
        --out benchmarks/out/daily-arxiv.jsonl.gz

Each id once, from the latest day that lists it (a paper recurs on the days it is replaced or
cross-listed). The lists' category field holds classification codes too ("68T45 (Machine
vision...)"): only arXiv's categories are kept. A line that is not a record with an id, a title
and an abstract is set aside with its file and the reason.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# arXiv's category codes ("cs.CV", "hep-th"), the project's one rule for them: an MSC or ACM
# code among the lists' categories is not one.
from wovepaper.lib.identifiers import CATEGORY_CODE_WHOLE  # noqa: E402

DAY_FILE = re.compile(r"^data/(\d{4}-\d{2}-\d{2})\.jsonl$")


def day_files(git_dir: Path, branch: str) -> list[tuple[str, str]]:
    """(path, day) of the branch's daily lists in order of day (the AI-written ones left out)."""
    names = subprocess.run(
        ["git", "-C", str(git_dir), "ls-tree", "--name-only", branch, "data/"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return sorted((name, m.group(1)) for name in names if (m := DAY_FILE.match(name)))


def snapshot_record(item: dict, day: str) -> dict:
    """A daily list's record in the snapshot's shape (the day stands for the version date)."""
    created = date.fromisoformat(day)
    categories = [c for c in item.get("categories") or [] if CATEGORY_CODE_WHOLE.match(c)]
    return {
        "id": item["id"],
        "submitter": None,
        "authors": ", ".join(item.get("authors") or []),
        "title": item["title"],
        "comments": item.get("comment"),
        "journal-ref": None,
        "doi": None,
        "report-no": None,
        "categories": " ".join(categories),
        "license": None,
        "abstract": item["summary"],
        "versions": [{"version": "v1", "created": created.strftime("%a, %d %b %Y 00:00:00 GMT")}],
        "update_date": day,
    }


def latest_records(git_dir: Path, branch: str) -> tuple[dict[str, dict], list[str]]:
    """Each id's record from the latest day that lists it, in the snapshot's shape, and the
    lines set aside (file, line and why)."""
    latest: dict[str, dict] = {}
    set_aside: list[str] = []
    for path, day in day_files(git_dir, branch):
        text = subprocess.run(
            ["git", "-C", str(git_dir), "show", f"{branch}:{path}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                if not isinstance(item, dict):
                    raise ValueError("not a JSON object")
                if not (item.get("id") and item.get("title") and item.get("summary")):
                    raise ValueError("no id, title or abstract")
            except ValueError as exc:
                set_aside.append(f"{path} line {number}: {exc}")
                continue
            latest[str(item["id"])] = snapshot_record(item, day)
    return latest, set_aside


def write_records(records: list[dict], out: Path, count: int | None = None) -> list[dict]:
    """Write the records (a seeded draw of `count` of them) as a gzipped snapshot file."""
    if count is not None and count < len(records):
        records = random.Random(43).sample(records, count)
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=True) + "\n")
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git-dir", type=Path, required=True)
    parser.add_argument("--branch", default="data")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--records", type=int, default=None, help="a seeded draw of this many of the records"
    )
    args = parser.parse_args()
    latest, set_aside = latest_records(args.git_dir, args.branch)
    for reason in set_aside:
        print(f"set aside: {reason}", file=sys.stderr)
    written = write_records(list(latest.values()), args.out, args.records)
    print(
        f"{args.out}: {len(written):,} of {len(latest):,} records, {len(set_aside)} lines set aside"
    )


if __name__ == "__main__":
    main()
