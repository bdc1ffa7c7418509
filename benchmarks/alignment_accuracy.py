"""Alignment accuracy over every recorded paper in the corpus that has an author list.

For each recorded paper (Semantic Scholar paper objects wherever they appear: paper batches,
searches, an author's papers, a paper's citations and references; OpenAlex works, singletons and
list pages), an arXiv-style byline is aligned with the source's author list by
`researchers.author_list_alignment.align_authors`, and every aligned name is judged by the
source's external id for the author at that position:

- OpenAlex: the byline is `raw_author_name` (the name as printed on the paper, e.g. "Touvron,
  Hugo"; OpenAlex's "None " prefix for a missing first part removed, as the client does),
  aligned against `author.display_name` (OpenAlex's name for the identity, e.g. "Hugo
  Touvron", "Édouard Grave").
- Semantic Scholar records only one spelling per author, so the byline is derived from it the
  way arXiv bylines differ from S2 lists, deterministically per paper: accents dropped (arXivRaw
  writes TeX; some submitters write plain ASCII), given names cut to initials, "Family, Given"
  order, one author missing from the byline, one extra author (from another recorded paper)
  added, and all of these at once. Each variant is reported apart, and every paper is run
  through every variant.

A byline name is *correct* when it aligns with a source author of the same id, *unmatched* when
it aligns with nothing, *wrong* when it aligns with an author of another id (or an added name
aligns at all). *Wrongly merged researchers* counts the distinct external ids that received a
wrong name: each one would have been a record holding another person's paper.

Run: python benchmarks/alignment_accuracy.py [--corpus PATH] [--unseen PATH] [--show-errors N]

Figures are printed for the corpus and, beside them, for a second folder of real recorded
answers that the matching rules were not shaped on (tests/fixtures/unseen by default).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Real recorded answers kept apart from the ones the matching rules were shaped on (no test
# reads them): see tests/fixtures/unseen/PROVENANCE.md.
UNSEEN = ROOT / "tests" / "fixtures" / "unseen"

from researchers.author_list_alignment import align_authors, align_links  # noqa: E402
from researchers.names import PARTICLES, fold, is_person, parse_name  # noqa: E402
from sources.openalex import clean_raw_author_name  # noqa: E402


@dataclass
class Paper:
    source: str
    key: str
    byline_names: list[str]  # the source's own spelling, for deriving bylines
    ids: list[str | None]  # the source's id of each listed author
    alternates: list[list[str]]  # what alignment compares against
    printed: list[str] | None = None  # OpenAlex raw_author_name


@dataclass
class Score:
    names: int = 0
    correct: int = 0
    unmatched: int = 0
    wrong: int = 0
    papers: int = 0
    wrong_ids: set[str] = field(default_factory=set)
    # Correct pairs by how they were made (exact, initials, nickname, same slot...), and the
    # source entries that are no person ("ATLAS Collaboration"), correct when left unpaired.
    methods: Counter = field(default_factory=Counter)
    not_people: int = 0
    # Unmatched names whose source identity bears another family name ("Richard Evans" printed,
    # OpenAlex's identity "K Taki"): the source attributes the name to someone else, and
    # refusing is what matching should do. Counted in `unmatched` and shown apart.
    other_person: int = 0
    # Unmatched names whose source identity the source also gives to another printed name of
    # the same paper (OpenAlex lists "Shazia Alam" for both "Samiah Alam" and "Tahiya Alam"):
    # at most one of them can be that identity. Counted in `unmatched`, shown apart, and not
    # in `other_person`.
    shared_identity: int = 0
    # Unmatched names whose source identity is written without Latin letters ("拓也 大嶋"):
    # the family names cannot be compared, so these stay misses, counted apart.
    other_script: int = 0

    def add(self, other: Score) -> None:
        self.names += other.names
        self.correct += other.correct
        self.unmatched += other.unmatched
        self.wrong += other.wrong
        self.papers += other.papers
        self.wrong_ids |= other.wrong_ids
        self.methods += other.methods
        self.not_people += other.not_people
        self.other_person += other.other_person
        self.shared_identity += other.shared_identity
        self.other_script += other.other_script


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


def _walk(node, found: list[dict]) -> None:
    if isinstance(node, dict):
        authors = node.get("authors")
        if (
            isinstance(authors, list)
            and authors
            and isinstance(authors[0], dict)
            and "name" in authors[0]
            and ("paperId" in node or "title" in node)
        ):
            found.append(node)
        if isinstance(node.get("authorships"), list) and "id" in node:
            found.append(node)
        for value in node.values():
            _walk(value, found)
    elif isinstance(node, list):
        for value in node:
            _walk(value, found)


def load_papers(corpus: Path) -> Iterator[Paper]:
    seen: set[tuple[str, str]] = set()
    files = [
        path
        for source in ("semanticscholar", "openalex")
        for pattern in ("*.json", "*.jsonl")
        for path in sorted((corpus / source).rglob(pattern))
    ]
    for path in files:
        if path.name in {"INDEX.json", "index.json"}:
            continue
        found: list[dict] = []
        if path.suffix == ".jsonl":
            # Semantic Scholar's bulk records (Open Research Corpus), one paper a line.
            for line in path.read_text().splitlines():
                if line.strip():
                    _walk(json.loads(line), found)
        else:
            _walk(json.loads(path.read_text()), found)
        for node in found:
            if "authorships" in node:
                key = ("openalex", node["id"])
                if key in seen or not node["authorships"]:
                    continue
                seen.add(key)
                ships = node["authorships"]
                yield Paper(
                    source="openalex",
                    key=node["id"],
                    byline_names=[(a.get("author") or {}).get("display_name") or "" for a in ships],
                    ids=[(a.get("author") or {}).get("id") for a in ships],
                    alternates=[[(a.get("author") or {}).get("display_name") or ""] for a in ships],
                    printed=[clean_raw_author_name(a.get("raw_author_name")) for a in ships],
                )
            else:
                key = ("s2", node.get("paperId") or node.get("id") or node.get("title"))
                if key in seen:
                    continue
                seen.add(key)
                authors = node["authors"]
                yield Paper(
                    source="s2",
                    key=key[1],
                    byline_names=[a.get("name") or "" for a in authors],
                    ids=[_s2_author_id(a) for a in authors],
                    alternates=[[a.get("name") or ""] for a in authors],
                )


def _s2_author_id(author: dict) -> str | None:
    """The API's `authorId`; the bulk corpus' records give a list of ids instead."""
    return author.get("authorId") or next(iter(author.get("ids") or []), None)


def _latin(name: str) -> bool:
    return any(ch.isalpha() and "LATIN" in unicodedata.name(ch, "") for ch in name)


def _roll(*parts: str) -> int:
    return int(hashlib.sha1("|".join(parts).encode()).hexdigest()[:8], 16)


def ascii_name(name: str) -> str:
    return fold(name).title() if name != fold(name) else name


def initials_name(name: str) -> str:
    """ "Jascha Narain Sohl-Dickstein" → "J. N. Sohl-Dickstein"; "Marie-Anne" → "M.-A."."""
    words = name.split()
    if len(words) < 2 or "," in name:
        return name
    idx = len(words) - 1
    while idx > 1 and words[idx - 1].islower() and fold(words[idx - 1]) in PARTICLES:
        idx -= 1
    initials = ["-".join(p[0] + "." for p in w.split("-") if p) for w in words[:idx]]
    return " ".join(initials + words[idx:])


def reordered_name(name: str) -> str:
    words = name.split()
    if len(words) < 2 or "," in name:
        return name
    return f"{words[-1]}, {' '.join(words[:-1])}"


def variants(paper: Paper, extra_name: str) -> Iterator[tuple[str, list[str], list[str | None]]]:
    """(variant, byline, truth id per byline name); None truth = a name the source does not list."""
    names, ids = paper.byline_names, paper.ids
    if paper.printed is not None:
        yield "printed name vs display name", paper.printed, list(ids)
        return
    yield "accents dropped", [ascii_name(n) for n in names], list(ids)
    yield "initials", [initials_name(n) for n in names], list(ids)
    yield "family, given", [reordered_name(n) for n in names], list(ids)
    mixed = []
    for i, n in enumerate(names):
        roll = _roll(paper.key, str(i)) % 4
        mixed.append([n, ascii_name(n), initials_name(n), reordered_name(n)][roll])
    yield "mixed", mixed, list(ids)
    if len(names) > 1:
        drop = _roll(paper.key, "drop") % len(names)
        yield (
            "author missing",
            [n for i, n in enumerate(mixed) if i != drop],
            [x for i, x in enumerate(ids) if i != drop],
        )
    at = _roll(paper.key, "extra") % (len(names) + 1)
    yield (
        "extra author",
        mixed[:at] + [extra_name] + mixed[at:],
        list(ids[:at]) + [None] + list(ids[at:]),
    )
    # Everything at once: initials without accents, one author missing, one added.
    hard = [initials_name(ascii_name(n)) for n in names]
    hard_ids = list(ids)
    if len(names) > 1:
        drop = _roll(paper.key, "drop") % len(names)
        hard, hard_ids = hard[:drop] + hard[drop + 1 :], hard_ids[:drop] + hard_ids[drop + 1 :]
    at = _roll(paper.key, "extra") % (len(hard) + 1)
    yield (
        "all at once",
        hard[:at] + [extra_name] + hard[at:],
        hard_ids[:at] + [None] + hard_ids[at:],
    )


UNJUDGED = "<no id>"


def _classify_miss(score: Score, paper: Paper, want: str, name: str) -> None:
    """Why a byline name found no pair: the source gives its identity to another printed name
    too, writes it in another script, or names someone of another family."""
    source_name = paper.byline_names[paper.ids.index(want)]
    if paper.ids.count(want) > 1:
        score.shared_identity += 1
    elif not _latin(source_name):
        score.other_script += 1
    elif parse_name(source_name).family_key != parse_name(name).family_key:
        score.other_person += 1


def judge(paper: Paper, byline: list[str], truth: list[str | None]) -> Score:
    """Truth per byline name: the author id, None for an added name, UNJUDGED for an id-less one."""
    score = Score(papers=1)
    links = align_links(byline, paper.alternates)
    not_people = {i for i, n in zip(paper.ids, paper.byline_names, strict=True) if not is_person(n)}
    for name, want, link in zip(byline, truth, links, strict=True):
        got = link.index if link else None
        got_id = paper.ids[got] if got is not None else None
        if want == UNJUDGED:
            continue
        score.names += 1
        if want in not_people:
            # No person: right when nothing is paired with it (and nothing ever is).
            score.not_people += 1
            score.correct, score.wrong = (
                (score.correct + 1, score.wrong)
                if got is None
                else (score.correct, score.wrong + 1)
            )
            continue
        if link is not None and got_id == want:
            score.methods[link.method] += 1
        if want is None:
            if got is None:
                score.correct += 1
            else:
                score.wrong += 1
                if got_id:
                    score.wrong_ids.add(f"{paper.source}:{got_id}")
            continue
        if got is None:
            score.unmatched += 1
            _classify_miss(score, paper, want, name)
        elif got_id == want:
            score.correct += 1
        else:
            score.wrong += 1
            if got_id:
                score.wrong_ids.add(f"{paper.source}:{got_id}")
    return score


def evaluate(papers: list[Paper], show_errors: int) -> tuple[dict[str, Score], Score]:
    by_variant: dict[str, Score] = {}
    total = Score()
    shown = 0
    pool = [n for p in papers for n in p.byline_names if n and is_person(n)]
    for index, paper in enumerate(papers):
        # The added author must be someone else: no family name shared with the paper's
        # authors (the pool holds other spellings of the same people, e.g. "Dl Parnas").
        families = {parse_name(n).family_key for n in paper.byline_names}
        start = _roll(paper.key, "pool") + index
        extra = next(
            pool[(start + k) % len(pool)]
            for k in range(len(pool))
            if parse_name(pool[(start + k) % len(pool)]).family_key not in families
        )
        for variant, byline, truth in variants(paper, extra):
            # Source authors without an id cannot be judged; the added name is judged as None.
            if variant in ("extra author", "all at once"):
                added = next(i for i, n in enumerate(byline) if n == extra)
                truth = [
                    t if t is not None or i == added else UNJUDGED for i, t in enumerate(truth)
                ]
            else:
                truth = [t if t is not None else UNJUDGED for t in truth]
            score = judge(paper, byline, truth)
            if (score.wrong or score.unmatched) and shown < show_errors:
                shown += 1
                aligned = align_authors(byline, paper.alternates)
                print(f"[{variant}] {paper.source} {paper.key}")
                for name, got, want in zip(byline, aligned, truth, strict=True):
                    got_name = paper.byline_names[got] if got is not None else "-"
                    got_id = paper.ids[got] if got is not None else None
                    flag = "" if got_id == want or (want is None and got is None) else "  <-- "
                    print(f"    {name!r:40} -> {got_name!r:40}{flag}")
            by_variant.setdefault(f"{paper.source}: {variant}", Score()).add(score)
            total.add(score)
    return by_variant, total


def report(title: str, folder: Path, papers: list[Paper], by_variant: dict, total: Score) -> None:
    sources = Counter(p.source for p in papers)
    print(f"== {title}: {folder}")
    print(
        f"recorded papers with an author list and author ids: {len(papers)} "
        f"(Semantic Scholar {sources['s2']}, OpenAlex {sources['openalex']})"
    )
    print()
    header = f"{'variant':42} {'papers':>7} {'names':>7} {'correct':>8} {'unmatched':>9} "
    print(header + f"{'wrong':>6} {'accuracy':>9}")
    for name, s in sorted(by_variant.items()):
        accuracy = 100 * s.correct / s.names if s.names else 0.0
        print(
            f"{name:42} {s.papers:>7} {s.names:>7} {s.correct:>8} {s.unmatched:>9} "
            f"{s.wrong:>6} {accuracy:>8.2f}%"
        )
    accuracy = 100 * total.correct / total.names if total.names else 0.0
    print()
    print(f"accuracy: {accuracy:.2f}% correct ({total.correct} of {total.names} byline names)")
    print(f"unmatched: {total.unmatched}, of which")
    print(
        f"    {total.other_person} where the source's identity bears another family name "
        "(the source gives the name to someone else)"
    )
    print(
        f"    {total.shared_identity} where the source gives that identity to another printed "
        "name of the paper too (at most one of them can be it)"
    )
    print(
        f"    {total.other_script} where the source writes the identity's name without Latin "
        "letters (judged as misses below)"
    )
    judged = total.names - total.other_person - total.shared_identity
    if judged:
        print(
            f"accuracy where the source's identity can be the printed person: "
            f"{100 * total.correct / judged:.2f}% ({total.correct} of {judged})"
        )
    print(f"wrongly matched: {total.wrong}")
    print(f"wrongly merged researchers: {len(total.wrong_ids)}")
    print(f"entries that are no person, left unpaired: {total.not_people}")
    print("correct pairs by how they were made:")
    for method, count in total.methods.most_common():
        print(f"    {method:28} {count:>7}")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="the corpus folder (default: ../shared/corpus)")
    parser.add_argument(
        "--unseen",
        default=str(UNSEEN) if UNSEEN.is_dir() else None,
        help="a second folder of recorded answers that matching was not tuned on "
        "(default: tests/fixtures/unseen); its papers already in the corpus are left out",
    )
    parser.add_argument(
        "--show-errors",
        type=int,
        default=0,
        help="print up to N papers with a wrong or missing alignment",
    )
    args = parser.parse_args(argv)
    corpus = find_corpus(args.corpus)
    # Only authors that carry an id can be judged; papers with none are counted and skipped.
    papers = [p for p in load_papers(corpus) if any(p.ids)]
    by_variant, total = evaluate(papers, args.show_errors)
    report("corpus", corpus, papers, by_variant, total)
    ok = total.names and total.correct >= 0.99 * total.names and not total.wrong_ids
    if args.unseen:
        seen = {(p.source, p.key) for p in papers}
        recorded = load_papers(Path(args.unseen))
        unseen = [p for p in recorded if any(p.ids) and (p.source, p.key) not in seen]
        # Each source apart: OpenAlex's printed names are real bylines, Semantic Scholar's
        # are derived from its one spelling, so one total would mix two kinds of evidence.
        for source, title in (("openalex", "unseen, OpenAlex"), ("s2", "unseen, Semantic Scholar")):
            part = [p for p in unseen if p.source == source]
            if not part:
                continue
            unseen_variants, unseen_total = evaluate(part, args.show_errors)
            report(title, Path(args.unseen), part, unseen_variants, unseen_total)
            ok = ok and not unseen_total.wrong_ids
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
