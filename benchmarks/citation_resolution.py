"""Citation resolution on the recorded set: every decision the loaders make on the recorded
answers (a cited or citing work resolved to an archive paper, or not), against the archive of
the database this runs against (the demo's, after `manage.py demo --no-serve`), with the share
resolved per source and per kind of id, and a seeded random sample of decisions, resolved and
unresolved, each with both sides, for checking by hand.

    DATABASE_URL=sqlite:////tmp/demo.sqlite3 python manage.py demo --no-serve
    DATABASE_URL=sqlite:////tmp/demo.sqlite3 python benchmarks/citation_resolution.py \\
        [--sample 100] [--seed 31]

The recorded set (nothing written; `papers.citations.load.works_resolve_how` decides, as the loaders
do):
- OpenAlex's `referenced_works` of the demo's papers (wovepaper/demo/recordings/citations.json):
  ids only;
- Semantic Scholar's 1,000 works citing "Computing Machinery and Intelligence" and its 14
  references (tests/fixtures/semanticscholar/paper_doi_full_fields_with_authors.json);
- the 156 references of Semantic Scholar's references endpoint for CorpusID:1033682
  (tests/fixtures/semanticscholar/paper_references_corpusid_1033682.*.json).

For an unresolved work with a title, the archive is searched for a paper of the same title
(case and punctuation aside): a hit there is a work the ids missed. Only works with a title
can be so checked (OpenAlex gives none).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

import django  # noqa: E402

django.setup()

from papers.citations.load import works_resolve_how  # noqa: E402
from papers.models import Paper  # noqa: E402
from sources.citation_answers import (  # noqa: E402
    CitedWork,
    arxiv_id_or_blank,
    openalex_referenced_works,
    s2_citing_works,
    s2_reference_page,
    s2_references,
)
from wovepaper.lib.identifiers import doi_normalized  # noqa: E402

S2_FIXTURES = ROOT / "tests" / "fixtures" / "semanticscholar"
DEMO_RECORDINGS = ROOT / "wovepaper" / "demo" / "recordings"
KINDS = ("arxiv", "doi", "s2", "openalex")
_WORDS = re.compile(r"\w+")


@dataclass
class Decision:
    source: str  # which recorded list the work is in
    where: str  # the other end of the edge
    work: CitedWork
    paper: tuple[int, str, str] | None = None  # (pk, arXiv id, kind of id that found it)
    same_title: list[tuple[str, str]] | None = None  # archive papers titled alike, unresolved


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def recorded_works() -> list[Decision]:
    decisions: list[Decision] = []
    recordings = _json(DEMO_RECORDINGS / "citations.json")
    held = set(Paper.objects.values_list("arxiv_id", flat=True))
    for record in recordings["openalex_works"]:
        doi = doi_normalized(record["answer"].get("doi"))
        # Only the demo's papers' lists are loaded (and so decided): the others have no citing
        # paper in the archive.
        if arxiv_id_or_blank(doi.removeprefix("10.48550/arxiv.")) in held:
            citing = f"cited by {doi.removeprefix('10.48550/arxiv.')}"
            decisions += [
                Decision("openalex references", citing, w)
                for w in openalex_referenced_works(record["answer"])
            ]
    turing = _json(S2_FIXTURES / "paper_doi_full_fields_with_authors.json")
    title = turing["title"]
    decisions += [
        Decision("s2 citing works (batch)", f"cites {title}", w) for w in s2_citing_works(turing)
    ]
    decisions += [
        Decision("s2 references (batch)", f"cited by {title}", w) for w in s2_references(turing)
    ]
    for page in sorted(S2_FIXTURES.glob("paper_references_corpusid_1033682.*.json")):
        decisions += [
            Decision("s2 references (endpoint)", "cited by CorpusID:1033682", w)
            for w in s2_reference_page(_json(page))
        ]
    return decisions


def _title_words(title: str) -> str:
    return " ".join(_WORDS.findall(title.lower()))


def decide(decisions: list[Decision]) -> None:
    for decision, paper in zip(
        decisions, works_resolve_how(d.work for d in decisions), strict=True
    ):
        decision.paper = paper
    # Unresolved works with a title: archive papers of the same title. The first word narrows
    # the query; the comparison is on all words, case and punctuation aside.
    for decision in decisions:
        words = _title_words(decision.work.title)
        if decision.paper or not words:
            continue
        first = words.split()[0]
        candidates = Paper.objects.filter(title__icontains=first).values_list("arxiv_id", "title")
        decision.same_title = [
            (arxiv_id, title) for arxiv_id, title in candidates if _title_words(title) == words
        ]


def _ids(work: CitedWork) -> str:
    ids = [
        f"{kind} {value}"
        for kind, value in (
            ("arXiv", work.arxiv_id),
            ("DOI", work.doi),
            ("S2", work.s2_id),
            ("OpenAlex", work.openalex_id),
        )
        if value
    ]
    return ", ".join(ids) or "no id"


def report(decisions: list[Decision], *, sample: int, seed: int) -> None:
    print(f"{len(decisions)} resolution decisions on the recorded set")
    by_source: dict[str, Counter] = {}
    for d in decisions:
        counts = by_source.setdefault(d.source, Counter())
        counts["works"] += 1
        counts["resolved"] += d.paper is not None
        counts["same title"] += bool(d.same_title)
    print("Per source:")
    for source, counts in sorted(by_source.items()):
        print(
            f"  {source}: {counts['resolved']} of {counts['works']} resolved "
            f"({counts['resolved'] / counts['works']:.1%}); unresolved with an archive paper "
            f"of the same title: {counts['same title']}"
        )
    print("Per kind of id (works carrying it; resolved, and by that id):")
    for kind in KINDS:
        carrying = [
            d for d in decisions if getattr(d.work, f"{kind}_id" if kind != "doi" else kind)
        ]
        resolved = sum(1 for d in carrying if d.paper)
        by_it = sum(1 for d in carrying if d.paper and d.paper[2] == kind)
        share = resolved / len(carrying) if carrying else 0
        print(
            f"  {kind}: {len(carrying)} works; {resolved} resolved ({share:.1%}), "
            f"{by_it} by their {kind} id"
        )
    missed = [d for d in decisions if d.same_title]
    print(f"Unresolved works whose title an archive paper has ({len(missed)}), all of them:")
    for d in missed:
        print(f"  [{d.source}] {d.work.title} ({d.work.year}; {_ids(d.work)}) ~ {d.same_title}")
    titles = dict(
        Paper.objects.filter(pk__in={d.paper[0] for d in decisions if d.paper}).values_list(
            "pk", "title"
        )
    )
    published = dict(Paper.objects.filter(pk__in=titles).values_list("pk", "published"))
    chosen = random.Random(seed).sample(decisions, min(sample, len(decisions)))
    print(f"A random sample of {len(chosen)} decisions (seed {seed}), for checking by hand:")
    for n, d in enumerate(chosen, 1):
        work = d.work
        print(
            f"{n:3}. [{d.source}, {d.where}] {work.title or '(no title given)'} "
            f"({work.year or 'no year'}; {_ids(work)})"
        )
        if d.paper:
            pk, arxiv_id, kind = d.paper
            year = published[pk].year if published.get(pk) else "no first-version date held"
            print(f"     = archive {arxiv_id}: {titles[pk]} ({year}), by {kind} id")
        elif d.same_title:
            print(f"     unresolved; archive papers of the same title: {d.same_title}")
        elif work.title:
            print("     unresolved: no archive paper has these ids or this title")
        else:
            print("     unresolved: no archive paper has these ids (no title to search by)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args(argv)
    decisions = recorded_works()
    decide(decisions)
    report(decisions, sample=args.sample, seed=args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
