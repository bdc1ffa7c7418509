"""Build the demo's recorded answers from the shared corpus (run by hand; see PROVENANCE.md).

    python -m wovepaper.demo.extract_recordings ../shared/corpus wovepaper/demo/recordings

Every object written is a recorded Semantic Scholar or OpenAlex answer, cut down to the fields
production's clients ask for (the services answer only the requested fields), with where it was
recorded and when. Nothing is written that no recording holds.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from pathlib import Path

from researchers.clients import openalex, semantic_scholar

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
        if data.get("id"):
            authors[openalex.bare_id(data["id"])] = {
                "answer": _pick(data, OA_AUTHOR_KEYS),
                "recorded": retrieved.get(path.stem, ""),
                "source": path.relative_to(corpus).as_posix(),
            }
    return list(works.values()), authors


def main(corpus: str, out: str, *extra_lists: str) -> None:
    corpus_path, out_path = Path(corpus), Path(out)
    out_path.mkdir(parents=True, exist_ok=True)
    s2_papers, s2_authors = semantic_scholar_answers(corpus_path)
    oa_works, oa_authors = openalex_answers(corpus_path, [Path(p) for p in extra_lists])
    for name, data in (
        ("semanticscholar_papers.json", s2_papers),
        ("semanticscholar_authors.json", s2_authors),
        ("openalex_works.json", oa_works),
        ("openalex_authors.json", oa_authors),
    ):
        (out_path / name).write_text(
            json.dumps(data, ensure_ascii=False, indent=0, sort_keys=True) + "\n", encoding="utf-8"
        )
        print(f"{name}: {len(data)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
