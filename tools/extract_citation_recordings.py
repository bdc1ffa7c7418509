"""Build the demo's recorded citation answers (run by hand; see the recordings' PROVENANCE.md).

    python -m tools.extract_citation_recordings ../shared/corpus \
        wovepaper/demo/recordings/citations.json --openalex-history <git dir of Mearman/BibGraph>

Writes the recorded answers that name citations of the demo's papers, each cut down to the
fields production's citation clients ask for, with where and when it was recorded:
- Semantic Scholar: the paper answers in the corpus that list `citations`, with the citing
  works that have an arXiv id (only those can be archive papers);
- OpenAlex: the arXiv works (by arXiv DOI) that carry `referenced_works`, from the corpus'
  Academic-Explorer files and every version of Mearman/BibGraph's OpenAlex files (its cache
  `{"url", "timestamp", "data"}`, and its saved works and list answers, each dated by the
  `index.json` beside it in the commit that added it); of several recordings of a work, the
  one listing the most references, then the latest. Nothing is written that no recording holds.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from email.utils import parsedate_to_datetime
from pathlib import Path

from sources import openalex, semantic_scholar

S2_WORK_KEYS = ("paperId", "externalIds", "title", "year", "citationCount")
OA_KEYS = ("id", "doi", *openalex.CITATION_WORK_FIELDS.split(","))
OA_KEYS = tuple(k for k in dict.fromkeys(OA_KEYS) if k not in ("primary_location", "locations"))
ARXIV_DOI = "https://doi.org/" + openalex.ARXIV_DOI_PREFIX


def _pick(data: dict, keys: tuple[str, ...]) -> dict:
    return {k: data[k] for k in keys if k in data}


def s2_citing_answers(corpus: Path) -> list[dict]:
    folder = corpus / "semanticscholar" / "danielnsilva" / "extracted"
    found = []
    for entry in json.loads((folder / "INDEX.json").read_text()):
        name = entry["file"].removeprefix("extracted/")
        if entry["status"] != 200 or entry["method"] != "GET" or "/paper/" not in entry["uri"]:
            continue
        data = json.loads((folder / name).read_text())
        if not isinstance(data, dict) or not data.get("citations"):
            continue
        assert semantic_scholar.CITATION_FIELDS  # the fields below are a subset of those
        found.append(
            {
                "cited": _pick(data, S2_WORK_KEYS),
                "citing": [
                    _pick(c, S2_WORK_KEYS)
                    for c in data["citations"]
                    if (c.get("externalIds") or {}).get("ArXiv")
                ],
                "recorded": parsedate_to_datetime(entry["date"]).date().isoformat(),
                "source": f"semanticscholar/danielnsilva/extracted/{name} $.citations",
            }
        )
    return found


def _works(data) -> list[tuple[str, dict]]:
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        return [(f"$.results[{i}]", w) for i, w in enumerate(data["results"])]
    return [("$", data)] if isinstance(data, dict) else []


def _keep(found: dict, work: dict, recorded: str, source: str) -> None:
    if not isinstance(work, dict) or "referenced_works" not in work:
        return
    if not (work.get("doi") or "").lower().startswith(ARXIV_DOI):
        return
    current = found.get(work["id"])
    rank = (len(work["referenced_works"]), recorded)
    if current is None or rank > (len(current["answer"]["referenced_works"]), current["recorded"]):
        found[work["id"]] = {"answer": _pick(work, OA_KEYS), "recorded": recorded, "source": source}


def openalex_corpus_answers(corpus: Path, found: dict) -> None:
    base = corpus / "openalex" / "academic-explorer" / "works"
    for path in sorted([*base.glob("W*.json"), *(base / "queries").glob("*.json")]):
        if path.name == "index.json":
            continue
        index = json.loads((path.parent / "index.json").read_text())["files"]
        recorded = index.get(path.stem, {}).get("lastRetrieved", "")[:10]
        for where, work in _works(json.loads(path.read_text())):
            source = path.relative_to(corpus).as_posix() + ("" if where == "$" else f" {where}")
            _keep(found, work, recorded, source)


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True, text=True
    ).stdout


def openalex_history_answers(git_dir: Path, found: dict) -> None:
    listing = _git(git_dir, "rev-list", "--all", "--objects", "--missing=allow-any")
    blobs = sorted(
        (path, sha)
        for sha, _, path in (line.partition(" ") for line in listing.splitlines())
        if "data/openalex/" in path and path.endswith(".json") and "index.json" not in path
    )
    for path, sha in blobs:
        try:
            data = json.loads(_git(git_dir, "cat-file", "-p", sha))
        except (subprocess.CalledProcessError, ValueError):
            continue
        added = _git(git_dir, "log", "--all", "--format=%h", "--find-object", sha).split()[-1]
        if isinstance(data, dict) and "timestamp" in data and "data" in data:
            recorded, answer, prefix = data["timestamp"][:10], data["data"], "$.data"
            request = f" (GET {data.get('url')})"
        else:
            folder, stem = path.rsplit("/", 1)[0], path.rsplit("/", 1)[1].removesuffix(".json")
            try:
                index = json.loads(_git(git_dir, "show", f"{added}:{folder}/index.json"))
            except (subprocess.CalledProcessError, ValueError):
                continue
            recorded = (index.get("files", {}).get(stem) or {}).get("lastRetrieved", "")[:10]
            answer, prefix, request = data, "$", ""
            if not recorded:
                continue
        for where, work in _works(answer):
            where = prefix + where.removeprefix("$")
            _keep(found, work, recorded, f"Mearman/BibGraph@{added}:{path} {where}{request}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--openalex-history", type=Path)
    args = parser.parse_args(argv)
    works: dict[str, dict] = {}
    openalex_corpus_answers(args.corpus, works)
    if args.openalex_history:
        openalex_history_answers(args.openalex_history, works)
    recordings = {
        "semanticscholar_citing": s2_citing_answers(args.corpus),
        "openalex_works": [works[k] for k in sorted(works)],
    }
    args.out.write_text(json.dumps(recordings, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
