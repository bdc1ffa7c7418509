"""How many TeX formulas of the bundled sample convert to MathML, and why the rest do not.

Every formula between delimiters in the sample's titles and abstracts goes through
papers.mathtext (the authors' shorthands with a standard meaning rewritten first); those that
stay source text are counted by cause, and the unknown commands behind them listed, most
frequent first, with an example each.

    python benchmarks/mathtext_coverage.py [--commands 30]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

import django  # noqa: E402

django.setup()

from latex2mathml.converter import convert  # noqa: E402

from papers import mathtext  # noqa: E402

SAMPLE = ROOT / "papers" / "sample" / "arxiv-sample.jsonl.gz"
COMMAND = re.compile(r"\\[A-Za-z]+")


def formulas() -> list[tuple[str, bool]]:
    found = []
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            for text in (record["title"], record["abstract"]):
                for source, tex, display in mathtext.segments(text):
                    if tex and source != tex:  # between delimiters
                        found.append((tex, display))
    return found


def cause(tex: str) -> tuple[str, set[str]]:
    if len(tex) > mathtext.MAX_FORMULA:
        return f"longer than {mathtext.MAX_FORMULA} characters", set()
    try:
        out = convert(mathtext.standard_tex(tex))
    except Exception as exc:  # noqa: BLE001 - the converter's exception is the cause
        return f"the converter raised {type(exc).__name__}", set()
    unknown = set(COMMAND.findall(out))
    if unknown:
        return "an unknown command (the authors' own macros)", unknown
    return "other (a stray & or an element outside the allowlist)", set()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=30, help="unknown commands listed")
    args = parser.parse_args()
    every = formulas()
    failed = [tex for tex, display in every if mathtext.formula_html(tex, display) is None]
    print(
        f"{len(every):,} formulas, {len(every) - len(failed):,} converted "
        f"({1 - len(failed) / len(every):.1%}), {len(failed):,} shown as source"
    )
    causes: Counter[str] = Counter()
    commands: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for tex in failed:
        why, unknown = cause(tex)
        causes[why] += 1
        for command in unknown:
            commands[command] += 1
            examples.setdefault(command, " ".join(tex.split())[:60])
    for why, count in causes.most_common():
        print(f"  {count:5}  {why}")
    print(f"unknown commands, the {args.commands} most frequent:")
    for command, count in commands.most_common(args.commands):
        print(f"  {count:5}  {command:14} e.g. ${examples[command]}$")


if __name__ == "__main__":
    main()
