"""Write a large synthetic arXiv metadata snapshot (gzipped JSON lines) for the import benchmark.

Every line has exactly the shape of the public snapshot (see papers/sample/ and
/work/shared/corpus/arxiv-snapshot/): the same keys in the same order, compact JSON with ASCII
escapes, hard-wrapped titles and abstracts, RFC 2822 version dates. The vocabulary (title and
abstract words, author names with their TeX accents, category codes, comments, journal
references, licences) is drawn from the bundled sample of real records, so string lengths and
character mix are realistic. Output is deterministic for a given seed and is streamed: memory
does not grow with the number of records.

    python benchmarks/generate_snapshot.py --records 1000000 \
        --out benchmarks/out/snapshot-1000000.jsonl.gz
"""

from __future__ import annotations

import argparse
import bisect
import gzip
import json
import math
import random
import sys
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import accumulate
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Pure (no Django): the rule set that tells a person's name from an address or a note.
from papers.nonpersons import is_person  # noqa: E402

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def format_version_date(value: datetime) -> str:
    """The inverse of papers.ingest.records.parse_version_date, e.g. "Mon, 2 Apr 2007 19:18:42
    GMT"."""
    # Names from our own tables: strftime's %a and %b follow the locale.
    return (
        f"{_DAYS[value.weekday()]}, {value.day} {_MONTH_NAMES[value.month - 1]} "
        f"{value.year} {value.hour:02d}:{value.minute:02d}:{value.second:02d} GMT"
    )


SAMPLE = ROOT / "papers" / "sample" / "arxiv-sample.jsonl.gz"
MAX_AUTHORS = 30
# arXiv bylines write accents in TeX (`Bal\'azs`, `G\"{o}del`, `\v{S}ik`, `{\l}`).
_TEX_ACCENTS = {
    "\u0301": "'",
    "\u0300": "`",
    "\u0308": '"',
    "\u0302": "^",
    "\u0303": "~",
    "\u0304": "=",
    "\u030c": "v",
    "\u0327": "c",
    "\u030a": "r",
    "\u0306": "u",
    "\u030b": "H",
}
_TEX_LETTERS = {
    "ł": "\\l",
    "Ł": "\\L",
    "ø": "\\o",
    "Ø": "\\O",
    "ß": "\\ss",
    "æ": "\\ae",
    "ı": "\\i",
}


def tex_encode(name: str) -> str:
    """Write a Unicode name the way many arXiv bylines do, with TeX accent commands."""
    out: list[str] = []
    for ch in name:
        if ord(ch) < 128:
            out.append(ch)
        elif ch in _TEX_LETTERS:
            out.append("{" + _TEX_LETTERS[ch] + "}")
        else:
            base, *marks = unicodedata.normalize("NFD", ch)
            command = _TEX_ACCENTS.get(marks[0]) if len(marks) == 1 else None
            if command is None:
                out.append(ch)
            elif command.isalpha():
                out.append(f"\\{command}{{{base}}}")
            else:
                out.append(f"{{\\{command}{base}}}" if base in "iI" else f"\\{command}{base}")
    return "".join(out)


def _author_count_weights() -> list[float]:
    """A discretised log-normal over 1..30 authors: mode 2, mean about 5, a long tail to 30.

    The real snapshot is long-tailed the same way (most papers have 1-4 authors, collaborations
    have hundreds); we cap at 30 as the benchmark asks.
    """
    mu, sigma = 1.3, 0.9
    return [
        math.exp(-((math.log(k) - mu) ** 2) / (2 * sigma**2)) / k for k in range(1, MAX_AUTHORS + 1)
    ]


@dataclass
class Vocabulary:
    """Pools drawn from real records; lists keep duplicates so choice() follows real frequency."""

    title_words: list[str]
    abstract_words: list[str]
    title_lengths: list[int]
    abstract_lengths: list[int]
    keynames: list[str]
    forenames: list[str]
    primary_categories: list[str]
    categories: list[str]
    comments: list[str]
    journal_refs: list[str]
    doi_prefixes: list[str]
    report_nos: list[str]
    licenses: list[str | None]

    @classmethod
    def from_sample(cls, path: Path = SAMPLE) -> Vocabulary:
        records = [
            json.loads(line) for line in gzip.open(path, "rt", encoding="utf-8") if line.strip()
        ]
        title_words: list[str] = []
        abstract_words: list[str] = []
        keynames: list[str] = []
        forenames: list[str] = []
        primary: list[str] = []
        categories: list[str] = []
        for r in records:
            words = r["title"].split()
            title_words.extend(words)
            abstract_words.extend(r["abstract"].split())
            for entry in r["authors_parsed"]:
                # Only people's names: "Collaboration" or "for the ATLAS" drawn as a name
                # would be dropped by the import (papers.nonpersons), so counts would not add up.
                if entry and not is_person(" ".join(filter(None, entry[1:2] + entry[:1]))):
                    continue
                if entry and entry[0]:
                    keynames.append(entry[0])
                if len(entry) > 1 and entry[1]:
                    forenames.append(entry[1])
            codes = r["categories"].split()
            primary.append(codes[0])
            categories.extend(codes)

        def present(key: str) -> list[str]:
            return [" ".join(r[key].split()) for r in records if r.get(key)]

        return cls(
            title_words=title_words,
            abstract_words=abstract_words,
            title_lengths=[len(r["title"].split()) for r in records],
            abstract_lengths=[len(r["abstract"].split()) for r in records],
            keynames=keynames,
            forenames=forenames,
            primary_categories=primary,
            categories=categories,
            comments=present("comments"),
            journal_refs=present("journal-ref"),
            doi_prefixes=sorted({r["doi"].split("/")[0] for r in records if r.get("doi")}),
            report_nos=present("report-no"),
            licenses=[r["license"] for r in records],
        )


@lru_cache(maxsize=1)
def default_vocabulary() -> Vocabulary:
    return Vocabulary.from_sample()


def _wrap(text: str, width: int, indent: str) -> str:
    """Hard-wrap like arXiv does: lines of at most `width` columns (unless a word is longer),
    continuation lines indented."""
    lines: list[str] = []
    start, end = 0, len(text)
    while end - start > width:
        cut = text.rfind(" ", start, start + width + 1)
        if cut <= start:
            cut = text.find(" ", start + width)
            if cut == -1:
                break
        lines.append(text[start:cut])
        start = cut + 1
    lines.append(text[start:])
    return ("\n" + indent).join(lines)


class _WordStream:
    """Words in real frequency, pre-shuffled once: a text is a slice at a random offset, which is
    as random as drawing each word but costs one random number instead of hundreds."""

    def __init__(self, words: list[str], rng: random.Random, size: int = 1 << 21) -> None:
        stream = (words * (size // max(len(words), 1) + 1))[:size]
        rng.shuffle(stream)
        self.words = stream
        self.rng = rng

    def take(self, count: int) -> str:
        count = min(count, len(self.words))
        start = self.rng.randrange(len(self.words) - count + 1)
        return " ".join(self.words[start : start + count])


class SnapshotGenerator:
    def __init__(
        self, seed: int = 42, *, start_month: str = "1501", vocabulary: Vocabulary | None = None
    ) -> None:
        self.rng = random.Random(seed)
        self.vocab = vocabulary or default_vocabulary()
        self.author_cum = list(accumulate(_author_count_weights()))
        self.title_words = _WordStream(self.vocab.title_words, self.rng, 1 << 18)
        self.abstract_words = _WordStream(self.vocab.abstract_words, self.rng)
        self.year = 2000 + int(start_month[:2])
        self.month = int(start_month[2:])
        self.category_counts = list(
            accumulate(
                [1964, 889, 244, 70]  # papers with 1, 2, 3, 4 categories in the real sample
            )
        )

    def _months(self):
        """New-style ids: YYMM.NNNNN, numbered from 00001 within a month, 15-24k a month."""
        while True:
            yield self.year, self.month, self.rng.randint(15000, 24000)
            self.month += 1
            if self.month == 13:
                self.month, self.year = 1, self.year + 1

    def records(self, count: int):
        produced = 0
        for year, month, in_month in self._months():
            for number in range(1, in_month + 1):
                if produced == count:
                    return
                yield self._record(year, month, number)
                produced += 1

    def _author(self) -> list[str]:
        rng, vocab = self.rng, self.vocab
        suffix = "Jr" if rng.random() < 0.003 else ""
        keyname, forenames = rng.choice(vocab.keynames), rng.choice(vocab.forenames)
        # Most accented names appear TeX-encoded, in the byline and in authors_parsed alike.
        if not (keyname + forenames).isascii() and rng.random() < 0.6:
            keyname, forenames = tex_encode(keyname), tex_encode(forenames)
        return [keyname, forenames, suffix]

    def _record(self, year: int, month: int, number: int) -> dict:
        rng, vocab = self.rng, self.vocab
        arxiv_id = f"{year % 100:02d}{month:02d}.{number:05d}"

        n_authors = bisect.bisect_left(self.author_cum, rng.random() * self.author_cum[-1]) + 1
        parsed = [self._author() for _ in range(n_authors)]
        names = [" ".join(p for p in (a[1], a[0], a[2]) if p) for a in parsed]
        if len(names) > 1 and rng.random() < 0.15:
            byline = ", ".join(names[:-1]) + " and " + names[-1]
        else:
            byline = ", ".join(names)

        title = _wrap(self.title_words.take(rng.choice(vocab.title_lengths)), 78, "  ")
        abstract = (
            "  "
            + _wrap(self.abstract_words.take(rng.choice(vocab.abstract_lengths)), 78, "")
            + "\n"
        )

        n_categories = (
            bisect.bisect_left(self.category_counts, rng.random() * self.category_counts[-1]) + 1
        )
        codes = [rng.choice(vocab.primary_categories)]
        for _ in range(12):  # a few tries are enough to find distinct cross-lists
            if len(codes) == n_categories:
                break
            code = rng.choice(vocab.categories)
            if code not in codes:
                codes.append(code)

        created = datetime(
            year,
            month,
            rng.randint(1, 28),
            rng.randint(0, 23),
            rng.randint(0, 59),
            rng.randint(0, 59),
            tzinfo=UTC,
        )
        n_versions = rng.choices((1, 2, 3), weights=(75, 18, 7))[0]
        versions = [{"version": "v1", "created": format_version_date(created)}]
        last = created
        for v in range(2, n_versions + 1):
            last = last + timedelta(days=rng.randint(1, 240), seconds=rng.randint(0, 86399))
            versions.append({"version": f"v{v}", "created": format_version_date(last)})
        update_date = (last + timedelta(days=rng.randint(0, 40))).date().isoformat()

        has_doi = rng.random() < 0.35
        return {
            "id": arxiv_id,
            "submitter": names[0] if rng.random() < 0.6 else None,
            "authors": byline,
            "title": title,
            "comments": rng.choice(vocab.comments) if rng.random() < 0.8 else None,
            "journal-ref": rng.choice(vocab.journal_refs) if rng.random() < 0.3 else None,
            "doi": (
                f"{rng.choice(vocab.doi_prefixes)}/{rng.choice('ABCDEFGHJKLMNPRSTVWXYZ')}"
                f"{rng.randint(1000, 99999)}.{rng.randint(1, 9999)}"
            )
            if has_doi
            else None,
            "report-no": rng.choice(vocab.report_nos) if rng.random() < 0.07 else None,
            "categories": " ".join(codes),
            "license": rng.choice(vocab.licenses),
            "abstract": abstract,
            "versions": versions,
            "update_date": update_date,
            "authors_parsed": parsed,
        }


def write_snapshot(
    path: Path,
    count: int,
    *,
    seed: int = 42,
    start_month: str = "1501",
    compresslevel: int = 1,
    progress: bool = True,
) -> dict[str, float]:
    path.parent.mkdir(parents=True, exist_ok=True)
    generator = SnapshotGenerator(seed, start_month=start_month)
    authors = Counter()
    started = time.perf_counter()
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(
        path,
        "wt",
        encoding="utf-8",
        **({"compresslevel": compresslevel} if path.suffix == ".gz" else {}),
    ) as out:
        for index, record in enumerate(generator.records(count), start=1):
            out.write(json.dumps(record, separators=(",", ":")))
            out.write("\n")
            authors[len(record["authors_parsed"])] += 1
            if progress and index % 100_000 == 0:
                print(f"  {index:,} records, {time.perf_counter() - started:.0f}s", file=sys.stderr)
    total = sum(authors.values())
    return {
        "records": total,
        "authorships": sum(k * v for k, v in authors.items()),
        "mean_authors": sum(k * v for k, v in authors.items()) / max(total, 1),
        "seconds": time.perf_counter() - started,
        "bytes": path.stat().st_size,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", "-n", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--start-month", default="1501", help="YYMM of the first id")
    parser.add_argument(
        "--out", type=Path, default=None, help="default: benchmarks/out/snapshot-<N>.jsonl.gz"
    )
    parser.add_argument("--compresslevel", type=int, default=1)
    args = parser.parse_args(argv)
    out = args.out or Path(__file__).parent / "out" / f"snapshot-{args.records}.jsonl.gz"
    stats = write_snapshot(
        out,
        args.records,
        seed=args.seed,
        start_month=args.start_month,
        compresslevel=args.compresslevel,
    )
    print(
        f"{out}: {stats['records']:,} records, {stats['authorships']:,} authorships "
        f"(mean {stats['mean_authors']:.2f} a paper), {stats['bytes'] / 1e6:,.0f} MB, "
        f"{stats['seconds']:.0f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
