"""Papers like your list, measured against two baselines (issue #32).

    WOVEPAPER_DATA_DIR=/tmp/demo-lib python manage.py demo --no-serve   # once: data, vectors
    WOVEPAPER_DATA_DIR=/tmp/demo-lib python benchmarks/recommendations.py [--min-papers 3]
    python benchmarks/recommendations.py --corpus ../shared/corpus [--min-papers 3]

On the corpus (no database: its records are read by the harvest's and the snapshot import's
parsers and embedded here by the site's encoder), libraries are made twice: from the author
identities its recorded Semantic Scholar and OpenAlex answers name (none of whose arXiv papers
are in its arXiv metadata, so no library can be made), and from the bylines' names as
researchers.names.name_key folds them, which is not an identity: two people of one name make
one library.

For each matched researcher with at least `--min-papers` embedded papers, a library is made of
their own papers, the newest held out. The candidates are every paper published after the
newest paper left in the library (the held-out one among them), none of the library's. Each
method ranks the candidates; a hit is the held-out paper in the first 20 (recall@20). Methods:

- vectors: accounts.library.recommendations.rank_candidates, the site's ranking (best cosine
  similarity to one saved paper), over every candidate (the site reads its candidates from the
  vector index's nearest; this measures the ranking, not the index);
- newest in the list's categories: candidates sharing a category with the library, newest
  first, then the rest newest first;
- keywords: TF-IDF (scikit-learn, English stop words, titles and abstracts of the whole
  collection) cosine of each candidate to the centre of the library's papers.

"Newer" is arXiv's order of submission, read from the ids (the papers matched from recorded
answers have no `published` date on the demo). Also printed: the candidates' median count, and the
recall a random order would have (20 / candidates, averaged).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings")

TOP = 20
_NEW_STYLE = re.compile(r"^(\d{2})(\d{2})\.(\d{4,5})$")
_OLD_STYLE = re.compile(r"^[a-z\-]+(?:\.[A-Z]{2})?/(\d{2})(\d{2})(\d{3})$")


def submission_order(arxiv_id: str) -> int | None:
    """A number that orders papers by when arXiv received them, from the id itself (year,
    month, then arXiv's own sequence number): the papers matched from recorded answers carry
    no `published` date, and every paper has an id."""
    found = _NEW_STYLE.match(arxiv_id) or _OLD_STYLE.match(arxiv_id)
    if not found:
        return None
    year, month, number = (int(part) for part in found.groups())
    year += 1900 if year >= 91 else 2000
    return (year * 100 + month) * 1_000_000 + number


def measure(
    label: str,
    arxiv_ids: list[str],
    categories: list[set[str]],
    texts: list[str],
    vectors: np.ndarray,
    papers_of: dict[object, set[int]],
    min_papers: int,
) -> None:
    """Recall@TOP of each method over the libraries `papers_of` makes (each key's papers, by
    their index in `arxiv_ids`, the newest held out), printed under `label`."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from accounts.library.recommendations import rank_candidates

    # "Newer" is later in arXiv's order of submission (see submission_order).
    published = np.array([submission_order(a) for a in arxiv_ids], dtype=np.int64)
    tfidf = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit_transform(texts)
    hits = {"vectors": 0, "newest in the list's categories": 0, "keywords": 0}
    tried = 0
    candidate_counts: list[int] = []
    random_recall: list[float] = []
    for own in papers_of.values():
        if len(own) < min_papers:
            continue
        ordered = sorted(own, key=lambda i: (published[i], arxiv_ids[i]))
        held_out, library = ordered[-1], ordered[:-1]
        newest_kept = published[library].max()
        candidates = np.flatnonzero(published > newest_kept)
        candidates = candidates[~np.isin(candidates, library)]
        tried += 1
        candidate_counts.append(len(candidates))
        random_recall.append(min(1.0, TOP / len(candidates)))

        score, _, _ = rank_candidates(vectors[library], vectors[candidates])
        ranked = {"vectors": candidates[np.argsort(-score, kind="stable")]}

        wanted = set().union(*(categories[i] for i in library))
        shares = np.array([bool(categories[i] & wanted) for i in candidates])
        order = np.lexsort((-published[candidates], ~shares))
        ranked["newest in the list's categories"] = candidates[order]

        centre = np.asarray(tfidf[library].mean(axis=0)).ravel()
        words = np.asarray(tfidf[candidates] @ centre).ravel()
        ranked["keywords"] = candidates[np.argsort(-words, kind="stable")]

        for name, found in ranked.items():
            hits[name] += int(held_out in found[:TOP])

    print(f"{label}: {len(arxiv_ids)} embedded papers, {tried} libraries (>= {min_papers} papers)")
    if not tried:
        print("  no library to measure")
        return
    print(f"  candidates per library: median {statistics.median(candidate_counts):.0f}")
    for name, count in hits.items():
        print(f"  recall@{TOP} {name:>32}: {count / tried:.3f} ({count}/{tried})")
    print(f"  recall@{TOP} {'a random order (expected)':>32}: {statistics.mean(random_recall):.3f}")


def demo_case(min_papers: int) -> None:
    """The demo's database: its embedded papers and its matched researchers."""
    from papers.models import Authorship, Paper
    from papers.search import PAPERS
    from papers.search.vectors import paper_vector_batches
    from wovepaper.lib.search import vector_backend_for

    model = vector_backend_for(PAPERS).encoder.name
    rows = list(
        Paper.objects.filter(is_deleted=False)
        .order_by("pk")
        .values_list("pk", "arxiv_id", "categories", "title", "abstract")
    )
    vector_of: dict[int, np.ndarray] = {}
    for ids, batch in paper_vector_batches(10_000, model):
        vector_of.update(zip(ids, batch, strict=True))
    rows = [r for r in rows if r[0] in vector_of and submission_order(r[1]) is not None]
    if not rows:
        sys.exit(f"No paper has a vector from {model}: run the demo first (see the docstring).")
    index = {r[0]: i for i, r in enumerate(rows)}
    papers_of: dict[object, set[int]] = {}
    for paper_id, researcher_id in Authorship.objects.filter(
        researcher__isnull=False, researcher__merged_into__isnull=True
    ).values_list("paper_id", "researcher_id"):
        if paper_id in index:
            papers_of.setdefault(researcher_id, set()).add(index[paper_id])
    measure(
        "demo, matched researchers",
        [r[1] for r in rows],
        [set(r[2].split()) for r in rows],
        [f"{r[3]} {r[4]}" for r in rows],
        np.stack([vector_of[r[0]] for r in rows]).astype(np.float32),
        papers_of,
        min_papers,
    )


def corpus_records(corpus: Path) -> list:
    """The papers of the corpus's arXiv metadata, read by the harvest's and the snapshot
    import's own parsers: the OAI-PMH ListRecords/GetRecord pages in the arXiv and arXivRaw
    formats, and the snapshot's lines. (Its one oai_dc page is refused by the harvest's parser,
    which reads arXiv's own formats only; the arXiv API's six Atom answers are not read.)"""
    from papers.harvest.oai import parse_list_records
    from papers.ingest.snapshot import parse_snapshot_line

    records: dict[str, object] = {}
    for path in sorted((corpus / "arxiv-oai").rglob("*.xml")):
        data = path.read_bytes()
        if b"<ListRecords" not in data and b"<GetRecord" not in data:
            continue
        if b"arxiv.org/OAI/arXivRaw/" in data:
            prefix = "arXivRaw"
        elif b"arxiv.org/OAI/arXiv/" in data:
            prefix = "arXiv"
        else:
            continue
        for record in parse_list_records(data, metadata_prefix=prefix).records:
            records.setdefault(record.arxiv_id, record)
    for path in sorted((corpus / "arxiv-snapshot").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = parse_snapshot_line(line)
            records.setdefault(record.arxiv_id, record)
    return [r for r in records.values() if submission_order(r.arxiv_id) is not None]


_ARXIV_IN_URL = re.compile(r"arxiv\.org/abs/([^\s?#]+?)(?:v\d+)?$", re.IGNORECASE)
_ARXIV_DOI = re.compile(r"10\.48550/arxiv\.(.+)$", re.IGNORECASE)


def _json_objects(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _json_objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from _json_objects(value)


def recorded_identities(corpus: Path) -> dict[str, set[str]]:
    """The arXiv ids of each author identity the corpus's recorded answers name: a Semantic
    Scholar authorId on a paper with `externalIds.ArXiv` (or an author's own `papers`), an
    OpenAlex author on a work whose DOI is arXiv's or whose location is an arXiv page."""
    found: dict[str, set[str]] = {}
    for path in sorted((corpus / "semanticscholar").rglob("*.json")):
        for obj in _json_objects(json.loads(path.read_text(encoding="utf-8"))):
            for author_id, arxiv_id in _s2_authorships(obj):
                found.setdefault(f"s2:{author_id}", set()).add(arxiv_id)
    for path in sorted((corpus / "openalex").rglob("*.json")):
        for obj in _json_objects(json.loads(path.read_text(encoding="utf-8"))):
            for author_id, arxiv_id in _openalex_authorships(obj):
                found.setdefault(f"openalex:{author_id}", set()).add(arxiv_id)
    return found


def _s2_authorships(obj: dict):
    external = obj.get("externalIds")
    if isinstance(external, dict) and external.get("ArXiv"):
        for author in obj.get("authors") or []:
            if isinstance(author, dict) and author.get("authorId"):
                yield author["authorId"], external["ArXiv"]
    if obj.get("authorId") and isinstance(obj.get("papers"), list):
        for paper in obj["papers"]:
            ids = (paper or {}).get("externalIds") or {}
            if isinstance(ids, dict) and ids.get("ArXiv"):
                yield obj["authorId"], ids["ArXiv"]


def _openalex_authorships(obj: dict):
    if not isinstance(obj.get("authorships"), list):
        return
    arxiv_id = None
    if match := _ARXIV_DOI.search(obj.get("doi") or ""):
        arxiv_id = match.group(1)
    for location in obj.get("locations") or []:
        if match := _ARXIV_IN_URL.search((location or {}).get("landing_page_url") or ""):
            arxiv_id = match.group(1)
    if arxiv_id:
        for authorship in obj["authorships"]:
            author = (authorship or {}).get("author") or {}
            if author.get("id"):
                yield author["id"], arxiv_id


def corpus_case(corpus: Path, min_papers: int) -> None:
    """../shared/corpus: the papers of its arXiv metadata, embedded here by the site's encoder,
    with libraries made from the author identities its recorded Semantic Scholar and OpenAlex
    answers name; and, since those name none of these papers, from the bylines' names."""
    import time

    from papers.search.embedding_stage import paper_text
    from researchers.names import name_key
    from wovepaper.lib.embeddings import text_encoder

    records = corpus_records(corpus)
    arxiv_ids = [r.arxiv_id for r in records]
    index = {arxiv_id: i for i, arxiv_id in enumerate(arxiv_ids)}
    identities = recorded_identities(corpus)
    named = {a for ids in identities.values() for a in ids}
    matched = {
        key: {index[a] for a in ids if a in index}
        for key, ids in identities.items()
        if any(a in index for a in ids)
    }
    print(
        f"corpus: {len(records)} papers in its arXiv metadata; its recorded answers name "
        f"{len(identities)} author identities with {len(named)} arXiv papers, "
        f"{len({a for a in named if a in index})} of them among these papers"
    )
    encoder = text_encoder()
    started = time.perf_counter()
    vectors = np.asarray(
        encoder.encode([paper_text(r.title, r.abstract) for r in records]), dtype=np.float32
    )
    seconds = time.perf_counter() - started
    print(f"  {len(records)} papers embedded by {encoder.name} in {seconds:.0f} s")
    categories = [set(r.categories) for r in records]
    texts = [f"{r.title} {r.abstract}" for r in records]
    measure(
        "corpus, S2/OpenAlex identities", arxiv_ids, categories, texts, vectors, matched, min_papers
    )
    by_name: dict[object, set[int]] = {}
    for i, record in enumerate(records):
        for author in record.authors:
            key = name_key(f"{author.forenames} {author.keyname}".strip())
            if key:
                by_name.setdefault(key, set()).add(i)
    measure(
        "corpus, authors by byline name (not identities)",
        arxiv_ids,
        categories,
        texts,
        vectors,
        by_name,
        min_papers,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-papers", type=int, default=3)
    parser.add_argument(
        "--corpus",
        type=Path,
        help="measure on this copy of ../shared/corpus instead of the demo's database",
    )
    args = parser.parse_args()
    if args.corpus is None and not (
        os.environ.get("WOVEPAPER_DATA_DIR") or os.environ.get("DATABASE_URL")
    ):
        sys.exit("Set WOVEPAPER_DATA_DIR to the demo's data (see the docstring).")

    import django

    django.setup()
    if args.corpus is not None:
        corpus_case(args.corpus, args.min_papers)
    else:
        demo_case(args.min_papers)


if __name__ == "__main__":
    main()
