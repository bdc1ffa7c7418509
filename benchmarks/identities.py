"""One person, one record: B3 precision and recall of researcher records against the people the
recorded answers themselves establish, before and after the identity rule's merges.

Reference: `wovepaper.demo.identity_truth` (its docstring gives the rules): Semantic Scholar and
OpenAlex author ids joined into people only by what a recorded answer states (the same ORCID iD
on OpenAlex authorships or author records, Semantic Scholar author records' ORCID and DBLP keys,
and the two sources' ids on the same slot of a paper both recorded, printed names agreeing).

Records: each dataset is loaded the way the demo loads it (`demo_identities_load`: the papers
written by `papers_upsert`, matched by production's `researchers.match_papers` against the
recordings served on 127.0.0.1), in a fresh SQLite database of its own under a temporary
folder, with the rule switched off (`MATCH_MERGE_SAME_PERSON=0`); "before" is that state, then
`same_person_merge()` runs and "after" is measured. Datasets:

- demo: `wovepaper/demo/recordings/` (353 papers);
- corpus: what `tools/extract_recordings.py` takes from `../shared/corpus` alone (the corpus's
  Semantic Scholar and OpenAlex answers, without the further repositories the demo's recordings
  add; no arXiv categories).

Items are source ids (an S2 or OpenAlex author id held by a record), not bylines: the reference
labels ids, and every byline of an id is on the record holding that id, so byline weighting
would only weigh people by paper count. Only *labelled* ids count (their person holds an ORCID,
a DBLP key or both sources' ids); the ids the recordings say nothing more about are counted and
left out. B3 per item i: precision = |record(i) ∩ person(i)| / |record(i)|, recall = |record(i)
∩ person(i)| / |person(i)|, over the labelled items, averaged.

Seeded split: the people are split in two halves by a hash of the seed and the person
(`--seed`, 42). The merge rule has no parameter, so both halves are fair for it; the name
variant rule (merge records whose names are variants and share at least k co-author records,
what `same_person_proposals` proposes) has one, k: it is chosen on the tune half (the smallest k
whose precision stays 1.0 there, none if no k does) and its figures are reported on the other
half, as a "what if" only: those pairs stay proposals for the curators.

    python benchmarks/identities.py [--corpus PATH] [--seed 42] [--only demo|corpus]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KS = (1, 2, 3)


def find_corpus(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    if os.environ.get("WOVEPAPER_CORPUS"):
        return Path(os.environ["WOVEPAPER_CORPUS"])
    for parent in ROOT.parents:
        candidate = parent / "shared" / "corpus"
        if candidate.is_dir():
            return candidate
    raise SystemExit("corpus not found: pass --corpus PATH or set WOVEPAPER_CORPUS")


def _setup(data_dir: Path) -> None:
    """A fresh SQLite database in `data_dir`, eager tasks, the identity rule off."""
    os.environ["WOVEPAPER_DATA_DIR"] = str(data_dir)
    for name in ("DATABASE_URL", "CELERY_BROKER_URL"):
        os.environ.pop(name, None)
    os.environ["MATCH_MERGE_SAME_PERSON"] = "0"
    os.environ["DJANGO_SETTINGS_MODULE"] = "wovepaper.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def b3(items: list[str], record: dict[str, int], person: dict[str, str]) -> dict[str, list]:
    """Per item: (precision, recall) of its record against its person, over `items`."""
    by_record: dict[int, set[str]] = defaultdict(set)
    by_person: dict[str, set[str]] = defaultdict(set)
    for item in items:
        by_record[record[item]].add(item)
        by_person[person[item]].add(item)
    out = {}
    for item in items:
        c, t = by_record[record[item]], by_person[person[item]]
        both = len(c & t)
        out[item] = [both / len(c), both / len(t)]
    return out


def summary(scores: dict[str, list], items: list[str]) -> dict:
    n = len(items)
    if not n:
        return {"items": 0, "precision": None, "recall": None, "f1": None}
    p = sum(scores[i][0] for i in items) / n
    r = sum(scores[i][1] for i in items) / n
    return {"items": n, "precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def _half(seed: int, person: str) -> str:
    digest = hashlib.sha256(f"{seed}:{person}".encode()).digest()
    return "tune" if digest[0] % 2 == 0 else "report"


def records_of_ids(ids: set[str]) -> dict[str, int]:
    """Each source id held by a record → its live record (merged records lead to survivors)."""
    from researchers.models import ResearcherExternalId

    out = {}
    for source, value, rid, merged in ResearcherExternalId.objects.filter(
        source__in=["s2", "openalex"]
    ).values_list("source", "value", "researcher_id", "researcher__merged_into_id"):
        key = f"{source}:{value}"
        if key in ids:
            out[key] = merged or rid
    return out


def _fmt(s: dict) -> str:
    if not s["items"]:
        return "no items"
    return f"{s['items']:>4} ids  P {s['precision']:.4f}  R {s['recall']:.4f}  F1 {s['f1']:.4f}"


def _what_if(items: list[str], after_held: dict[str, int], measure) -> None:
    """The name-variant rule as a "what if": records whose names are variants and share at
    least k co-author records merged, k tuned on the tune half, reported on the other."""
    from researchers.curation.same_person import same_person_proposals

    proposals = same_person_proposals()
    labelled_records = {after_held[i] for i in items}
    what_if = {}
    for k in KS:
        target: dict[int, int] = {}
        for p in proposals:
            if len(p.coauthors) >= k:
                a, b = sorted((p.low.pk, p.high.pk))
                target[b] = target.get(a, a)
        joined = {}
        for item, rid in after_held.items():
            while rid in target:  # each step goes to a lower id: no cycle
                rid = target[rid]
            joined[item] = rid
        judged = sum(
            1
            for p in proposals
            if len(p.coauthors) >= k and {p.low.pk, p.high.pk} <= labelled_records
        )
        what_if[k] = (measure(joined), judged)
    # A k is chosen only where the tune half judges some pair and keeps precision 1.0 there.
    chosen = next(
        (k for k in KS if what_if[k][1] and what_if[k][0]["tune"]["precision"] == 1.0), None
    )
    print(
        f"Name variants with co-authors in common (proposals, never merged): {len(proposals)}; "
        "merged as a what-if, k shared co-authors or more, k tuned on the tune half: "
        + (
            str(chosen)
            if chosen is not None
            else "none (no k judges a pair with both records labelled and keeps precision 1.0 "
            "on the tune half): the rule cannot be shown safe, so it only proposes"
        )
    )
    for k in KS:
        measured, judged = what_if[k]
        mark = " (chosen)" if k == chosen else ""
        print(
            f"  k={k}{mark}: report {_fmt(measured['report'])}; tune {_fmt(measured['tune'])}; "
            f"pairs with both records labelled: {judged}"
        )
    for p in proposals:
        print(
            f"  proposal {p.low.display_name} ({p.low.pk}) / {p.high.display_name} "
            f"({p.high.pk}), {p.names}; co-authors in common: {', '.join(p.coauthors)}; "
            f"queue's evidence: {'; '.join(p.evidence.evidence_for()) or 'none'}"
        )


def run_dataset(label: str, folder: Path | None, seed: int, template: Path, db: Path) -> dict:
    from django.db import connections

    from papers.models import Authorship
    from researchers.curation.queue import curation_clusters
    from researchers.curation.same_person import same_person_merge
    from wovepaper.demo.identities import demo_identities_load
    from wovepaper.demo.identity_truth import identity_truth
    from wovepaper.demo.replay import Recordings

    connections.close_all()
    shutil.copyfile(template, db)
    recordings = Recordings() if folder is None else Recordings(folder=folder)
    started = time.monotonic()
    loaded = demo_identities_load(recordings)
    print(f"\n## {label}: {loaded.describe()} ({time.monotonic() - started:.0f} s)")

    truth = identity_truth(recordings)
    source_ids = truth.source_ids()
    held = records_of_ids(source_ids)
    labelled = truth.labelled()
    items = sorted(i for i in labelled if i in held)
    person = {i: truth.person(i) for i in items}
    half = {i: _half(seed, person[i]) for i in items}
    bylines = Authorship.objects.filter(
        researcher__external_ids__value__in=[i.split(":", 1)[1] for i in items]
    ).count()
    print(
        f"Reference: {len(source_ids)} source ids in the recordings "
        f"({', '.join(f'{k} {v}' for k, v in sorted(truth.rule_counts().items()))} statements); "
        f"{len(held)} held by a record; {len(items)} labelled and held (on {bylines} bylines), "
        f"{len(held) - len(items)} held but left out (no ORCID, DBLP key or second source's "
        f"id says who they are), {len(source_ids) - len(held)} held by no record (entries that "
        "name no person, author records of papers not loaded)."
    )
    people = {person[i] for i in items}
    multi = sum(1 for p in people if sum(1 for i in items if person[i] == p) > 1)
    print(
        f"People: {len(people)} ({multi} with two or more ids); halves by seed {seed}: "
        f"tune {sum(1 for i in items if half[i] == 'tune')} ids, "
        f"report {sum(1 for i in items if half[i] == 'report')} ids."
    )

    def measure(record: dict[str, int]) -> dict[str, dict]:
        scores = b3(items, record, person)
        return {
            name: summary(scores, [i for i in items if name == "all" or half[i] == name])
            for name in ("tune", "report", "all")
        }

    before = measure(held)
    outcome = same_person_merge()
    after_held = records_of_ids(source_ids)
    after = measure(after_held)
    print("B3 of the records against the recordings' people:")
    for name in ("report", "tune", "all"):
        print(f"  {name:>6} before: {_fmt(before[name])}")
        print(f"  {name:>6}  after: {_fmt(after[name])}")

    print(f"Merges made by the rule: {len(outcome.merged)}")
    for merged in outcome.merged:
        print(f"  {merged['folded']} into {merged['survivor']}: {merged['note']}")
    print(f"Pairs the rule left to the curators: {len(outcome.left)}")
    for left in outcome.left:
        print(f"  {left['pair']}: {'; '.join(left['why_not'])} ({'; '.join(left['evidence'])})")

    _what_if(items, after_held, measure)
    clusters = curation_clusters(limit=100)
    pairs = [(c.name_key, pair) for c in clusters for pair in c.pairs]
    print(f"Same-name pairs in the curators' queue after the rule: {len(pairs)}")
    for key, pair in pairs:
        print(
            f"  {key}: {pair.a} / {pair.b}, score {pair.score}; for: "
            f"{'; '.join(pair.evidence_for()) or 'nothing'}; against: "
            f"{'; '.join(pair.evidence_against()) or 'nothing'}"
        )
    return {"before": before, "after": after, "merged": outcome.merged, "left": outcome.left}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="the shared corpus (default ../shared/corpus)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--only", choices=["demo", "corpus"])
    args = parser.parse_args(argv)
    given = argv if argv is not None else sys.argv[1:]
    print(f"Command: {' '.join(['python benchmarks/identities.py', *given])}")
    print(
        "Reference: the people the recorded answers establish (wovepaper/demo/identity_truth.py:"
        " ORCID on OpenAlex authorships and author records, Semantic Scholar authors' ORCID and"
        " DBLP keys, both sources' ids on one byline slot); B3 over labelled source ids."
    )
    work = Path(tempfile.mkdtemp(prefix="wovepaper-identities-"))
    try:
        _setup(work / "data")
        from django.db import connections

        db = work / "data" / "wovepaper.sqlite3"
        template = work / "migrated.sqlite3"
        connections.close_all()
        shutil.copyfile(db, template)
        if args.only in (None, "demo"):
            run_dataset("demo recordings", None, args.seed, template, db)
        if args.only in (None, "corpus"):
            from tools.extract_recordings import main as extract

            folder = work / "corpus-recordings"
            corpus = find_corpus(args.corpus)
            extract([str(corpus), str(folder)])
            # The corpus holds no arXiv categories: the papers get none, as the demo's would.
            (folder / "arxiv_categories.json").write_text("{}\n", encoding="utf-8")
            run_dataset(f"corpus ({corpus})", folder, args.seed, template, db)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
