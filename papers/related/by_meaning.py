"""Related by meaning ("similar papers" on a paper's page): a paper's nearest neighbours by
meaning, each with a short reason a reader can check (topic words both share, shared
categories, shared authors).

The neighbours come from the vector backend (wovepaper.lib.search.vectors) and are cached per
paper under the vector index's version, so they are refreshed when the neighbourhood changes:
whenever the index takes new or changed vectors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from ..models import Authorship, Paper
from .core import cached_until_the_index_changes, live_papers, paper_vectors_backend

SIMILAR_COUNT = 10
# Words so common in abstracts that sharing them says nothing about a topic.
ABSTRACT_WORDS = frozenset(
    "paper papers study studies result results show shows shown present propose proposed "
    "approach method methods based using use used new model models analysis problem problems "
    "work data also however first two three one case cases well high low large small "
    "different various provide provides obtain obtained find found further general recent "
    "within without given possible allows important".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z\-]{3,}")


@dataclass
class SimilarPaper:
    paper: Paper
    similarity: float
    shared_words: list[str] = field(default_factory=list)
    shared_categories: list[str] = field(default_factory=list)
    shared_authors: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str:
        """One line: what the two papers share that a reader can see."""
        parts = []
        if self.shared_words:
            parts.append("both about " + ", ".join(self.shared_words))
        if self.shared_authors:
            parts.append("shared authors: " + ", ".join(self.shared_authors))
        if self.shared_categories:
            parts.append("also in " + ", ".join(self.shared_categories))
        return "; ".join(parts) or "close in meaning, with no topic word in common"


def topic_words(text: str) -> list[str]:
    """Content words of a text in order of first appearance, folded to lower case."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text or ""):
        word = word.lower().strip("-")
        if word not in ENGLISH_STOP_WORDS and word not in ABSTRACT_WORDS and len(word) > 3:
            seen.setdefault(word, None)
    return list(seen)


def _shared_words(paper: Paper, other: Paper, limit: int = 3) -> list[str]:
    # Title words first: what a paper is about is in its title.
    mine_title = topic_words(paper.title)
    mine = mine_title + [w for w in topic_words(paper.abstract) if w not in mine_title]
    theirs = set(topic_words(other.title)) | set(topic_words(other.abstract))
    return [word for word in mine if word in theirs][:limit]


def _authors(paper_ids: list[int]) -> dict[int, dict[str, str]]:
    """Each paper's authors as identity key -> name shown: the researcher record when matched,
    else the folded name as written."""
    found: dict[int, dict[str, str]] = {}
    rows = Authorship.objects.filter(paper_id__in=paper_ids).values_list(
        "paper_id", "researcher_id", "name"
    )
    for paper_id, researcher_id, name in rows:
        key = f"r{researcher_id}" if researcher_id else f"n{' '.join(name.lower().split())}"
        found.setdefault(paper_id, {})[key] = name
    return found


def _neighbours(paper: Paper, count: int) -> list[tuple[int, float]]:
    backend = paper_vectors_backend()
    key = f"papers:similar:{paper.pk}:{paper.source_hash}:{backend.version()}:{count}"
    # A few more than shown: a neighbour deleted since the index last heard of it is dropped.
    return cached_until_the_index_changes(key, lambda: backend.similar_to(paper.pk, count + 5))


def similar_papers(paper: Paper, count: int = SIMILAR_COUNT) -> list[SimilarPaper]:
    """The papers nearest to this one in meaning, nearest first, each with its reason; [] while
    the paper has no vector. Three queries whatever the count, the neighbours cached."""
    neighbours = _neighbours(paper, count)
    if not neighbours:
        return []
    ids = [paper_id for paper_id, _ in neighbours]
    others = live_papers(ids)
    authors = _authors([paper.pk, *others])
    mine = authors.get(paper.pk, {})
    categories = paper.category_list
    found = []
    for paper_id, similarity in neighbours:
        other = others.get(paper_id)
        if other is None:
            continue
        theirs = authors.get(paper_id, {})
        found.append(
            SimilarPaper(
                paper=other,
                similarity=similarity,
                shared_words=_shared_words(paper, other),
                shared_categories=[c for c in other.category_list if c in categories],
                shared_authors=[mine[k] for k in mine if k in theirs][:3],
            )
        )
    return found[:count]
