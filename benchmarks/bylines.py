"""How many authorships name no person, before and after the byline rules (papers.nonpersons).

For each data set, the authorships the earlier code wrote ("before") and those written now
("after"), each name judged by two rule sets:

- R, the parser's own rules (papers.nonpersons.list_kinds over the whole list: notes,
  collaborations, affiliations, places, one-word places after an address, and for a source's
  list the address dump after three affiliations or places in a row). A collaboration
  kept as an authorship counts here as a name that is not a person's (it is marked so).
- X, checks the parser does not use, to catch what R misses: brackets, a colon, "&" or a
  digit in the name; more than five words; one word in capitals of two letters or more (an
  acronym: "NRAO"); a first word in lower case that is not a name particle ("for", "the").

The data sets:

- the bundled sample (papers/sample/arxiv-sample.jsonl.gz, 3,200 records): before, its
  `authors_parsed` entries as the import wrote them; after,
  papers.ingest.snapshot.parse_snapshot_line;
- the demo's recorded source lists (wovepaper/demo/recordings, Semantic Scholar's author list,
  else OpenAlex's, of the 353 papers the demo matches; for the papers the sample lacks the demo
  writes them as bylines): before, each name an authorship; after, author_list_cleaned;
- ../shared/corpus: the arXivRaw page's 1,000 raw bylines (before, split_authors(clean=False),
  which is the split before this change; after, split_authors), the two arXiv-format pages'
  <author> lists (before, as given; after, papers.harvest.oai's parse) and the snapshot's first 200
  lines (as the sample).

    python benchmarks/bylines.py [--corpus ../shared/corpus] [--show 20]
    python benchmarks/bylines.py --draw 300 --seed 29 > benchmarks/data/bylines-300.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

import django  # noqa: E402

django.setup()

from lxml import etree  # noqa: E402

from papers import nonpersons  # noqa: E402
from papers.authors import (  # noqa: E402
    AuthorName,
    author_list_cleaned,
    parse_display_name,
    separate_tex_macros,
    split_authors,
)
from papers.harvest import oai  # noqa: E402
from papers.ingest.snapshot import parse_snapshot_line  # noqa: E402
from researchers.names import PARTICLES  # noqa: E402
from sources.openalex import work_arxiv_id  # noqa: E402

SAMPLE = ROOT / "papers" / "sample" / "arxiv-sample.jsonl.gz"
RECORDINGS = ROOT / "wovepaper" / "demo" / "recordings"
ARXIV_NS = "http://arxiv.org/OAI/arXiv/"
RAW_NS = "http://arxiv.org/OAI/arXivRaw/"
_ACRONYM = re.compile(r"^[A-Z]{2,}\.?$")


def x_flag(name: str) -> str:
    """The first of the X checks the name fails, "" when it passes them all."""
    words = name.split()
    if re.search(r"[()\[\]:&\d]", name):
        return "bracket, colon, & or digit"
    if len(words) > 5:
        return "more than five words"
    if len(words) == 1 and _ACRONYM.match(name):
        return "an acronym alone"
    if words and words[0][:1].islower() and words[0].lower() not in PARTICLES:
        return "a lower-case first word"
    return ""


@dataclass
class Byline:
    source: str
    key: str
    raw: str
    before: list[AuthorName]
    after: list[AuthorName]


@dataclass
class Tally:
    authorships: int = 0
    by_r: int = 0
    by_x_only: int = 0
    marked_people: int = 0
    people_flagged: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, names: list[AuthorName], *, show: int, source_list: bool = False) -> None:
        displays = [a.display for a in names]
        kinds = nonpersons.list_kinds(displays, source_list=source_list)
        for author, name, kind in zip(names, displays, kinds, strict=True):
            self.authorships += 1
            flagged = ""
            if kind != nonpersons.PERSON:
                self.by_r += 1
                flagged = f"R:{kind}"
            elif x_flag(name):
                self.by_x_only += 1
                flagged = f"X:{x_flag(name)}"
            if author.person:
                self.marked_people += 1
                if flagged:
                    self.people_flagged += 1
                    if len(self.examples) < show:
                        self.examples.append(f"{name!r} ({flagged})")

    def share(self) -> float:
        return (self.by_r + self.by_x_only) / self.authorships if self.authorships else 0.0


def _sample_bylines(path: Path, source: str) -> Iterator[Byline]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            data = json.loads(line)
            before = [
                AuthorName(keyname=e[0] or "", forenames=e[1] or "", suffix=e[2] or "")
                for e in data["authors_parsed"]
            ]
            record = parse_snapshot_line(line)
            yield Byline(source, data["id"], data["authors"], before, record.authors)


def _recorded_bylines() -> Iterator[Byline]:
    s2 = json.loads((RECORDINGS / "semanticscholar_papers.json").read_text())
    works = json.loads((RECORDINGS / "openalex_works.json").read_text())
    seen = set()
    for arxiv_id, paper in sorted(s2.items()):
        names = [a.get("name") or "" for a in paper["answer"]["authors"]]
        seen.add(arxiv_id)
        yield _from_names("recorded Semantic Scholar list", arxiv_id, names)
    for work in works:
        answer = work["answer"]
        arxiv_id = work_arxiv_id(answer)
        if not arxiv_id or arxiv_id in seen:
            continue
        seen.add(arxiv_id)
        names = [
            (s.get("author") or {}).get("display_name") or s.get("raw_author_name") or ""
            for s in answer.get("authorships") or []
        ]
        yield _from_names("recorded OpenAlex list", arxiv_id, names)


def _from_names(source: str, key: str, names: list[str]) -> Byline:
    before = [parse_display_name(n) for n in names if n.strip()]
    after = author_list_cleaned(before, source_list=True)
    return Byline(source, key, ", ".join(names), before, after)


def _raw_bylines(corpus: Path) -> Iterator[Byline]:
    path = (
        corpus
        / "arxiv-oai"
        / "arxivsync"
        / "listrecords_arXivRaw_2014-01-16_token_496549-46001.xml"
    )
    for record in etree.parse(str(path)).iter(f"{{{RAW_NS}}}arXivRaw"):
        raw = record.findtext(f"{{{RAW_NS}}}authors") or ""
        clean = separate_tex_macros(oai.clean_text(raw))
        key = record.findtext(f"{{{RAW_NS}}}id") or ""
        yield Byline(
            "corpus arXivRaw", key, raw, split_authors(clean, clean=False), split_authors(clean)
        )


def _arxiv_format_bylines(corpus: Path) -> Iterator[Byline]:
    for path in sorted((corpus / "arxiv-oai" / "arxivsync").glob("listrecords_arXiv_*.xml")):
        data = path.read_bytes()
        parsed = {
            r.arxiv_id: r for r in oai.parse_list_records(data, metadata_prefix="arXiv").records
        }
        for meta in etree.fromstring(data).iter(f"{{{ARXIV_NS}}}arXiv"):
            key = meta.findtext(f"{{{ARXIV_NS}}}id") or ""
            before = [
                AuthorName(
                    keyname=a.findtext(f"{{{ARXIV_NS}}}keyname") or "",
                    forenames=a.findtext(f"{{{ARXIV_NS}}}forenames") or "",
                    suffix=a.findtext(f"{{{ARXIV_NS}}}suffix") or "",
                )
                for a in meta.iter(f"{{{ARXIV_NS}}}author")
            ]
            raw = ", ".join(a.display for a in before)
            yield Byline("corpus arXiv format", key, raw, before, parsed[key].authors)


def datasets(corpus: Path) -> dict[str, list[Byline]]:
    return {
        "bundled sample (3,200 records)": list(_sample_bylines(SAMPLE, "bundled sample")),
        "demo's recorded source lists": list(_recorded_bylines()),
        "corpus: arXivRaw page (raw bylines)": list(_raw_bylines(corpus)),
        "corpus: arXiv-format pages (<author> lists)": list(_arxiv_format_bylines(corpus)),
        "corpus: snapshot first 200": list(
            _sample_bylines(
                corpus / "arxiv-snapshot" / "arxiv-metadata-oai-snapshot.first200.jsonl",
                "corpus snapshot",
            )
        ),
    }


def report(corpus: Path, show: int) -> None:
    print("share = authorships whose name is no person's, by R (the parser's rules) or X")
    print("(checks it does not use); 'marked people flagged' = after the change, names still")
    print("marked as people that R or X flags.\n")
    header = f"{'data set':46} {'':6} {'authorships':>11} {'R':>6} {'X only':>6} {'share':>7}"
    print(header)
    for name, bylines in datasets(corpus).items():
        before, after = Tally(), Tally()
        for b in bylines:
            # A source's list is read as one (rule 6), before as after.
            source_list = b.source.startswith("recorded")
            before.add(b.before, show=0, source_list=source_list)
            after.add(b.after, show=show, source_list=source_list)
        for label, t in (("before", before), ("after", after)):
            print(
                f"{name:46} {label:6} {t.authorships:>11,} {t.by_r:>6,} {t.by_x_only:>6,} "
                f"{t.share():>7.2%}"
            )
        print(
            f"{'':46} marked people flagged: {after.people_flagged} of {after.marked_people:,}"
            + (": " + "; ".join(after.examples) if after.examples else "")
        )


def draw(corpus: Path, size: int, seed: int) -> None:
    """A seeded draw of bylines, one JSON line each with the parse to check by hand."""
    sets = datasets(corpus)
    # The sample holds the corpus's records already: the draw is over the sample and the
    # demo's recorded lists, each paper once.
    pool = sets["bundled sample (3,200 records)"] + sets["demo's recorded source lists"]
    for b in random.Random(seed).sample(pool, size):
        print(
            json.dumps(
                {
                    "source": b.source,
                    "id": b.key,
                    "byline": " ".join(b.raw.split()),
                    "parsed": [
                        a.display + ("" if a.person else " [not a person]") for a in b.after
                    ],
                },
                ensure_ascii=False,
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--show", type=int, default=20)
    parser.add_argument("--draw", type=int, default=0)
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    if args.draw:
        draw(args.corpus, args.draw, args.seed)
    else:
        report(args.corpus, args.show)


if __name__ == "__main__":
    main()
