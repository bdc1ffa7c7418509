"""Papers like your list, measured against two baselines (issue #32).

    WOVEPAPER_DATA_DIR=/tmp/demo-lib python manage.py demo --no-serve   # once: data, vectors
    WOVEPAPER_DATA_DIR=/tmp/demo-lib python benchmarks/recommendations.py [--min-papers 3]

For each matched researcher with at least `--min-papers` embedded papers, a library is made of
their own papers, the newest held out. The candidates are every paper published after the
newest paper left in the library (the held-out one among them), none of the library's. Each
method ranks the candidates; a hit is the held-out paper in the first 20 (recall@20). Methods:

- vectors: accounts.recommendations.rank_candidates, the site's ranking (best cosine similarity
  to one saved paper), over every candidate (the site reads its candidates from the vector
  index's nearest; this measures the ranking, not the index);
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-papers", type=int, default=3)
    args = parser.parse_args()
    if not os.environ.get("WOVEPAPER_DATA_DIR") and not os.environ.get("DATABASE_URL"):
        sys.exit("Set WOVEPAPER_DATA_DIR to the demo's data (see the docstring).")

    import django

    django.setup()
    from sklearn.feature_extraction.text import TfidfVectorizer

    from accounts.recommendations import rank_candidates
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
    ids = np.array([r[0] for r in rows])
    index = {pk: i for i, pk in enumerate(ids)}
    # "Newer" is later in arXiv's order of submission (see submission_order).
    published = np.array([submission_order(r[1]) for r in rows], dtype=np.int64)
    categories = [set(r[2].split()) for r in rows]
    vectors = np.stack([vector_of[pk] for pk in ids]).astype(np.float32)
    tfidf = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit_transform(
        [f"{r[3]} {r[4]}" for r in rows]
    )

    papers_of: dict[int, set[int]] = {}
    for paper_id, researcher_id in Authorship.objects.filter(
        researcher__isnull=False, researcher__merged_into__isnull=True
    ).values_list("paper_id", "researcher_id"):
        if paper_id in index:
            papers_of.setdefault(researcher_id, set()).add(index[paper_id])

    hits = {"vectors": 0, "newest in the list's categories": 0, "keywords": 0}
    tried = 0
    candidate_counts: list[int] = []
    random_recall: list[float] = []
    for own in papers_of.values():
        if len(own) < args.min_papers:
            continue
        ordered = sorted(own, key=lambda i: (published[i], ids[i]))
        held_out, library = ordered[-1], ordered[:-1]
        newest_kept = published[library].max()
        tried += 1
        candidates = np.flatnonzero(published > newest_kept)
        candidates = candidates[~np.isin(candidates, library)]
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

    if not tried:
        sys.exit("No researcher has enough embedded papers with a newest one to hold out.")
    print(
        f"{len(rows)} embedded papers, {tried} libraries (researchers with >= {args.min_papers} "
        f"papers), candidates per library: median {statistics.median(candidate_counts):.0f}"
    )
    for name, count in hits.items():
        print(f"  recall@{TOP} {name:>32}: {count / tried:.3f} ({count}/{tried})")
    print(f"  recall@{TOP} {'a random order (expected)':>32}: {statistics.mean(random_recall):.3f}")


if __name__ == "__main__":
    main()
