"""Build the demo's recorded answers from the shared corpus (run by hand; see PROVENANCE.md).

    python -m tools.extract_recordings ../shared/corpus wovepaper/demo/recordings \
        [openalex list answers...] [--s2-history <git dir> --readnext <git dir>] \
        [--openalex-history <git dir>] [--openalex-saved <owner/name>=<git dir> ...]

Every object written is a recorded Semantic Scholar or OpenAlex answer, cut down to the fields
production's clients ask for (the services answer only the requested fields), with where it was
recorded and when. Nothing is written that no recording holds.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path

from sources import openalex, semantic_scholar

S2_PAPER_KEYS = ("paperId", *semantic_scholar.PAPER_FIELDS.split(","))
S2_AUTHOR_KEYS = ("authorId", *semantic_scholar.AUTHOR_FIELDS.split(","))
OA_WORK_KEYS = (*openalex.WORK_FIELDS.split(","), "display_name", "publication_date")
OA_AUTHOR_KEYS = tuple(openalex.AUTHOR_FIELDS.split(","))


def _pick(data: dict, keys: tuple[str, ...]) -> dict:
    return {k: data[k] for k in keys if k in data}


def _walk(node, path: str):
    """Every dict in a JSON document, with its JSON path."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{path}[{i}]")


def semantic_scholar_answers(corpus: Path) -> tuple[dict, dict]:
    folder = corpus / "semanticscholar" / "danielnsilva" / "extracted"
    index = json.loads((folder / "INDEX.json").read_text())
    papers: dict[str, dict] = {}
    authors: dict[str, dict] = {}
    for entry in sorted(index, key=lambda e: e["file"]):
        if entry["status"] != 200:
            continue
        name = entry["file"].removeprefix("extracted/")
        recorded = parsedate_to_datetime(entry["date"]).date().isoformat()
        source = f"semanticscholar/danielnsilva/extracted/{name}"
        for path, obj in _walk(json.loads((folder / name).read_text()), "$"):
            arxiv_id = (obj.get("externalIds") or {}).get("ArXiv") if "paperId" in obj else None
            if arxiv_id and obj.get("authors") and obj.get("title"):
                current = papers.get(arxiv_id)
                # Several recordings of one paper: the one listing most authors.
                if current is None or len(obj["authors"]) > len(current["answer"]["authors"]):
                    papers[arxiv_id] = {
                        "answer": _pick(obj, S2_PAPER_KEYS),
                        "title": obj["title"],
                        "recorded": recorded,
                        "source": f"{source} {path}",
                    }
            if "authorId" in obj and "hIndex" in obj and obj.get("authorId"):
                current = authors.get(obj["authorId"])
                if current is None or recorded > current["recorded"]:
                    authors[obj["authorId"]] = {
                        "answer": _pick(obj, S2_AUTHOR_KEYS),
                        "recorded": recorded,
                        "source": f"{source} {path}",
                    }
    return papers, authors


def _retrieved(folder: Path) -> dict[str, str]:
    index = json.loads((folder / "index.json").read_text())
    return {key: value.get("lastRetrieved", "")[:10] for key, value in index["files"].items()}


def _openalex_works_in(path: Path, root: Path, prefix: str, recorded: str) -> Iterator[dict]:
    """The arXiv works of one recorded OpenAlex answer (a work, or a list of works)."""
    data = json.loads(path.read_text())
    listed = isinstance(data.get("results"), list)
    for i, work in enumerate(data["results"] if listed else [data]):
        doi = (work.get("doi") or "").lower() if isinstance(work, dict) else ""
        # The clients find arXiv papers by their arXiv DOI, as OpenAlex's doi filter does.
        if "authorships" in work and doi.startswith("https://doi.org/" + openalex.ARXIV_DOI_PREFIX):
            where = prefix + path.relative_to(root).as_posix()
            where += f" $.results[{i}]" if listed else ""
            yield {"answer": _pick(work, OA_WORK_KEYS), "recorded": recorded, "source": where}


def openalex_answers(corpus: Path, extra_lists: list[Path]) -> tuple[list, dict]:
    """Works from the corpus' Academic-Explorer cache and from further list answers of that
    cache (each next to its index.json, which says when it was retrieved)."""
    base = corpus / "openalex" / "academic-explorer"
    paths = sorted((base / "works").glob("W*.json"))
    paths += sorted(
        p for p in (base / "works" / "queries").glob("*.json") if p.name != "index.json"
    )
    works: dict[str, dict] = {}
    # A further list answer lies in a checkout of Mearman/Academic-Explorer, at
    # apps/web/public/data/openalex/works/queries/: its source is named from that checkout.
    found = [(p, corpus, "") for p in paths]
    found += [(p, p.parents[7], "Mearman/Academic-Explorer:") for p in extra_lists]
    for path, root, prefix in found:
        recorded = _retrieved(path.parent).get(path.stem, "")
        for work in _openalex_works_in(path, root, prefix, recorded):
            works.setdefault(work["answer"]["id"], work)
    authors: dict[str, dict] = {}
    retrieved = _retrieved(base / "authors")
    for path in sorted((base / "authors").glob("A*.json")):
        data = json.loads(path.read_text())
        key = openalex.bare_id(data["id"]) if data.get("id") else None
        if key:
            authors[key] = {
                "answer": _pick(data, OA_AUTHOR_KEYS),
                "recorded": retrieved.get(path.stem, ""),
                "source": path.relative_to(corpus).as_posix(),
            }
    return list(works.values()), authors


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(git_dir), *args], capture_output=True, text=True, check=True
    ).stdout


def _cassette_bodies(text: str) -> Iterator[tuple[int, dict | list, str]]:
    """(interaction index, JSON body, recorded day) of each HTTP 200 answer in a VCR.py
    cassette, in either of its dialects (`body.string`/`status.code` or
    `content`/`status_code`)."""
    import yaml  # present with drf-spectacular; only this hand-run extraction reads YAML

    doc = yaml.safe_load(text)
    for i, interaction in enumerate(doc.get("interactions") or [] if isinstance(doc, dict) else []):
        response = interaction.get("response") or {}
        status = response.get("status_code") or (response.get("status") or {}).get("code")
        body = response.get("content") or (response.get("body") or {}).get("string")
        dates = (response.get("headers") or {}).get("Date") or []
        if status != 200 or not body or not dates:
            continue
        try:
            parsed = json.loads(body)
        except ValueError:
            continue
        yield i, parsed, parsedate_to_datetime(dates[0]).date().isoformat()


def semantic_scholar_history_answers(git_dir: Path, wanted: set[str]) -> dict[str, dict]:
    """Semantic Scholar paper answers for the `wanted` arXiv ids from every version of
    danielnsilva/semanticscholar's `tests/data/` cassettes (the corpus copied only some
    versions). Each source names the commit that added the cassette version."""
    found: dict[str, dict] = {}
    listing = _git(
        git_dir, "rev-list", "--all", "--objects", "--missing=allow-any", "--", "tests/data"
    )
    blobs = sorted(
        (path, sha)
        for sha, _, path in (line.partition(" ") for line in listing.splitlines())
        if path.startswith("tests/data/") and path.endswith(".yaml")
    )
    for path, sha in blobs:
        try:
            text = _git(git_dir, "cat-file", "-p", sha)
        except subprocess.CalledProcessError:  # a blob the snapshot does not hold
            continue
        for i, body, recorded in _cassette_bodies(text):
            for json_path, obj in _walk(body, "$"):
                arxiv_id = (obj.get("externalIds") or {}).get("ArXiv") if "paperId" in obj else None
                if arxiv_id not in wanted or not obj.get("authors") or not obj.get("title"):
                    continue
                current = found.get(arxiv_id)
                if current is None or len(obj["authors"]) > len(current["answer"]["authors"]):
                    found[arxiv_id] = {
                        "answer": _pick(obj, S2_PAPER_KEYS),
                        "title": obj["title"],
                        "recorded": recorded,
                        "source": (sha, path, f"interaction {i} {json_path}"),
                    }
    for record in found.values():
        sha, path, where = record["source"]
        added = _git(git_dir, "log", "--all", "--format=%h", "--find-object", sha).split()[-1]
        record["source"] = f"danielnsilva/semanticscholar@{added}:{path} {where}"
    return found


OPENALEX_CACHE_DIR = "/public/data/openalex/cache/"


def openalex_history_answers(git_dir: Path, known: set[str]) -> list[dict]:
    """arXiv works, not among `known` (OpenAlex work ids), from every version of the OpenAlex
    answers Mearman/BibGraph (Academic-Explorer's later name, the same history) cached with
    their request: `…/public/data/openalex/cache/<hash>.json` holds {"url", "timestamp",
    "data"}, `data` being OpenAlex's answer to `url`. Of several recordings of a work, the one
    holding most of the fields the client asks for, then the latest."""
    listing = _git(git_dir, "rev-list", "--all", "--objects", "--missing=allow-any")
    blobs = sorted(
        (path, sha)
        for sha, _, path in (line.partition(" ") for line in listing.splitlines())
        if OPENALEX_CACHE_DIR in path and path.endswith(".json")
    )
    found: dict[str, dict] = {}
    for path, sha in blobs:
        try:
            cached = json.loads(_git(git_dir, "cat-file", "-p", sha))
        except (subprocess.CalledProcessError, ValueError):  # absent from the snapshot
            continue
        data = cached.get("data") if isinstance(cached, dict) else None
        if not isinstance(data, dict) or not cached.get("url") or not cached.get("timestamp"):
            continue
        recorded = cached["timestamp"][:10]
        for i, work in enumerate(data.get("results") or []):
            doi = (work.get("doi") or "").lower() if isinstance(work, dict) else ""
            if "authorships" not in work or work.get("id") in known:
                continue
            if not doi.startswith("https://doi.org/" + openalex.ARXIV_DOI_PREFIX):
                continue
            answer = _pick(work, OA_WORK_KEYS)
            current = found.get(work["id"])
            rank = (len(answer), recorded)
            if current is None or rank > (len(current["answer"]), current["recorded"]):
                found[work["id"]] = {
                    "answer": answer,
                    "recorded": recorded,
                    "source": (sha, path, f"$.data.results[{i}] (GET {cached['url']})"),
                }
    for record in found.values():
        sha, path, where = record["source"]
        added = _git(git_dir, "log", "--all", "--format=%h", "--find-object", sha).split()[-1]
        record["source"] = f"Mearman/BibGraph@{added}:{path} {where}"
    return [found[k] for k in sorted(found)]


@dataclass(frozen=True)
class SavedAnswers:
    """OpenAlex answers a public repository saved as data files: `works` holds the `results`
    of list requests, `authors` one answer to `GET /authors/{id}` or a list of them."""

    commit: str
    works: str
    works_request: str
    authors: str
    # The day they were fetched: a path and a pattern for a file that states it, else the day
    # of the commit that added them (they were fetched on or before it).
    fetched_in: tuple[str, str] | None = None


SAVED_OPENALEX_ANSWERS = {
    # scripts/fetch_sample_data.py: works found by ten topic searches, then the authors of the
    # first 20 of them; docs/data_card.md gives the day and the licence (CC0).
    "Justin21523/openalex-research-rag": SavedAnswers(
        commit="79f11106fd75",
        works="data/sample/works_sample.json",
        works_request="GET /works?search=<topic>&filter=has_abstract:true,language:en&select=…",
        authors="data/sample/authors_sample.json",
        fetched_in=("docs/data_card.md", r"^\|\s*Date fetched\s*\|\s*(\d{4}-\d{2}-\d{2})\s*\|"),
    ),
    # scripts/openalex_enrich.py: the author by ORCID, then every page of its works_api_url.
    "carlosdenner/academic-cv": SavedAnswers(
        commit="19500d2ac68f",
        works="data/processed/openalex_works.json",
        works_request="GET /works?filter=author.id:A5003721947&per-page=200&page=<n>",
        authors="data/processed/openalex_author.json",
    ),
}


def openalex_saved_answers(
    repo: str, git_dir: Path, known: set[str]
) -> tuple[list[dict], dict[str, dict]]:
    """arXiv works (not among `known`, OpenAlex work ids and DOIs) and author records from the
    OpenAlex answers `repo` saved (`SAVED_OPENALEX_ANSWERS`), read at its commit."""
    saved = SAVED_OPENALEX_ANSWERS[repo]

    def blob(path: str) -> str:
        return _git(git_dir, "show", f"{saved.commit}:{path}")

    if saved.fetched_in:
        found = re.search(saved.fetched_in[1], blob(saved.fetched_in[0]), re.MULTILINE)
        recorded = found.group(1) if found else ""
    else:
        added = _git(git_dir, "log", "--format=%cs", saved.commit, "--", saved.authors)
        recorded = added.split()[-1]
    where = f"{repo}@{saved.commit[:7]}:"
    works, seen = [], set(known)
    for i, work in enumerate(json.loads(blob(saved.works))):
        work_id, doi = (work.get("id") or "").lower(), (work.get("doi") or "").lower()
        if "authorships" not in work or work_id in seen or doi in seen:
            continue
        if doi.startswith("https://doi.org/" + openalex.ARXIV_DOI_PREFIX):
            seen |= {work_id, doi}
            works.append(
                {
                    "answer": _pick(work, OA_WORK_KEYS),
                    "recorded": recorded,
                    "source": f"{where}{saved.works} $[{i}] ({saved.works_request})",
                }
            )
    answers = json.loads(blob(saved.authors))
    authors = {}
    for i, author in enumerate(answers if isinstance(answers, list) else [answers]):
        key = openalex.bare_id(author.get("id"))
        if key:
            at = f"$[{i}]" if isinstance(answers, list) else "$"
            authors[key] = {
                "answer": _pick(author, OA_AUTHOR_KEYS),
                "recorded": recorded,
                "source": f"{where}{saved.authors} {at} (GET /authors/{key})",
            }
    return sorted(works, key=lambda w: w["answer"]["id"]), authors


READNEXT_DOCUMENTS = "tests/testing_data/test_documents_frame.parquet"


def readnext_categories(git_dir: Path, commit: str) -> dict[str, dict]:
    """arXiv id → arXiv's categories (column `arxiv_labels`) from joel-beck/readnext's test
    documents (100 arXiv papers). Needs pyarrow, which the project does not depend on."""
    import pyarrow.parquet as pq

    blob = subprocess.run(
        ["git", "-C", str(git_dir), "show", f"{commit}:{READNEXT_DOCUMENTS}"],
        capture_output=True,
        check=True,
    ).stdout
    rows = pq.read_table(io.BytesIO(blob), columns=["arxiv_id", "arxiv_labels"]).to_pylist()
    return {
        row["arxiv_id"]: {
            "categories": list(row["arxiv_labels"]),
            "source": f"joel-beck/readnext@{commit[:7]}:{READNEXT_DOCUMENTS} row {i}, "
            "column arxiv_labels",
        }
        for i, row in enumerate(rows)
        if row["arxiv_id"] and row["arxiv_labels"]
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("extra_lists", nargs="*", type=Path, help="OpenAlex list answers")
    parser.add_argument("--s2-history", type=Path, help="git dir of danielnsilva/semanticscholar")
    parser.add_argument("--readnext", type=Path, help="git dir of joel-beck/readnext")
    parser.add_argument("--readnext-commit", default="8017f91")
    parser.add_argument("--openalex-history", type=Path, help="git dir of Mearman/BibGraph")
    parser.add_argument(
        "--openalex-saved",
        action="append",
        default=[],
        metavar="OWNER/NAME=GITDIR",
        help=f"git dir of one of {', '.join(SAVED_OPENALEX_ANSWERS)}",
    )
    args = parser.parse_args(argv)
    out_path = args.out
    out_path.mkdir(parents=True, exist_ok=True)
    s2_papers, s2_authors = semantic_scholar_answers(args.corpus)
    oa_works, oa_authors = openalex_answers(args.corpus, args.extra_lists)
    if args.openalex_history:
        known = {w["answer"]["id"] for w in oa_works}
        oa_works += openalex_history_answers(args.openalex_history, known)
    for saved in args.openalex_saved:  # in the order given
        repo, _, git_dir = saved.partition("=")
        known = {(w["answer"].get(k) or "").lower() for w in oa_works for k in ("id", "doi")}
        saved_works, saved_authors = openalex_saved_answers(repo, Path(git_dir), known)
        oa_works += saved_works
        for key, record in saved_authors.items():
            # Of several recordings of an author, the latest.
            if key not in oa_authors or record["recorded"] > oa_authors[key]["recorded"]:
                oa_authors[key] = record
    outputs: list[tuple[str, dict | list]] = []
    if args.readnext:
        categories = readnext_categories(args.readnext, args.readnext_commit)
        if args.s2_history:
            # Further papers only where arXiv's own categories are known for them: a paper
            # without them would add researchers without fields.
            wanted = set(categories) - set(s2_papers)
            s2_papers.update(semantic_scholar_history_answers(args.s2_history, wanted))
        held = set(s2_papers) | {openalex.work_arxiv_id(w["answer"]) for w in oa_works}
        outputs.append(
            ("arxiv_categories.json", {k: v for k, v in categories.items() if k in held})
        )
    for name, data in (
        ("semanticscholar_papers.json", s2_papers),
        ("semanticscholar_authors.json", s2_authors),
        ("openalex_works.json", oa_works),
        ("openalex_authors.json", oa_authors),
        *outputs,
    ):
        (out_path / name).write_text(
            json.dumps(data, ensure_ascii=False, indent=0, sort_keys=True) + "\n", encoding="utf-8"
        )
        print(f"{name}: {len(data)}")


if __name__ == "__main__":
    main()
