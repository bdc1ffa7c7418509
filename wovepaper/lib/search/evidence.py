"""Whether a query means anything here: the one rule that decides if search by meaning has
anything "related" to show (hybrid search's second part, `mode=semantic`, chat's sources and
saved-search alerts all go through `VectorBackend.search`, which asks it).

Every text has a nearest paper, so something must say when the nearest is not close. Before
#43 a global floor on each paper's cosine similarity did (0.45, chosen on the project's own
paraphrases): on questions written independently it cut the right paper for a quarter to a
third of them. The rule now judges the query, not each paper, on two pieces of evidence
(`python benchmarks/semantic.py evidence` measured the candidates on a tuning half and reports
on the other half; docs/search.md has the figures):

- its words: at least one of them is in the archive's vocabulary (some title, abstract or
  byline holds it, as the keyword engine says). Made-up words ("zzzqqqxx", "plimbo zentrix")
  land the encoder near some paper (0.41, 0.37) for no reason; no paper holds them.
- its best hit: the cosine similarity of its nearest paper is at least
  `SEARCH_MEANING_THRESHOLD`. Queries from everyday life and other fields ("cheap flights to
  paris", "baroque counterpoint") have real words but no paper near them; a question about a
  paper here has that paper, or one like it, well above them.

A query that passes keeps the papers the vector ranking finds, in its order, down to
`SEARCH_SIMILARITY_FLOOR` (0.15: well under any tuning question's own paper, 0.228 at the
least, and above a random paper's usual similarity, 0.06); one that fails has nothing related.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings


def meaning_threshold() -> float:
    """The least cosine similarity of a query's nearest paper for the query to mean something
    here (settings.SEARCH_MEANING_THRESHOLD, measured for the encoder)."""
    return float(getattr(settings, "SEARCH_MEANING_THRESHOLD", 0.37))


def evidence_judged() -> bool:
    """Whether the rule judges the words at all (SEARCH_MEANING_EVIDENCE): off, the old floor
    alone decides."""
    return bool(getattr(settings, "SEARCH_MEANING_EVIDENCE", True))


def means_something_here(best_similarity: float, words_known: Callable[[], bool]) -> bool:
    """Whether a query whose nearest document has `best_similarity` is about anything here.
    `words_known()` (asked only when the similarity passes: it may cost a keyword query,
    which hybrid search answers from the keyword rankings it asks anyway) says whether any
    document holds one of its words. With SEARCH_MEANING_EVIDENCE off, the old
    floor alone decides (for measuring what the rule changes)."""
    if not evidence_judged():
        return True
    return best_similarity >= meaning_threshold() and words_known()
