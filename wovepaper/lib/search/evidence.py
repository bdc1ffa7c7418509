"""Whether a query means anything here: the one rule that decides if search by meaning has
anything "related" to show (hybrid search's second part, `mode=semantic`, chat's sources and
saved-search alerts all go through `VectorBackend.search`, which asks it).

Every text has a nearest paper, so something must say when the nearest is not close. Before
#43 a global floor on each paper's cosine similarity did (0.45, chosen on the project's own
paraphrases): on questions written independently it cut the right paper for a quarter to a
third of them. The rule now judges the query, not each paper, on two pieces of evidence
(`python benchmarks/semantic.py evidence` measured the candidates on a tuning half and reports
on the other half; docs/search.md has the figures):

- its words: enough of them are in the archive's vocabulary (some title, abstract or byline
  holds each, as the keyword engine says): at least one, and a share of its content words (the
  English stop words left out) of at least `SEARCH_MEANING_WORD_SHARE`. Made-up words
  ("zzzqqqxx", "plimbo zentrix") land the encoder near some paper (0.41, 0.37) for no reason;
  no paper holds them, and "zib zab zoob" is no nearer to meaning something for one paper
  holding "zab".
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
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from .base import parse_text


def meaning_threshold() -> float:
    """The least cosine similarity of a query's nearest paper for the query to mean something
    here (settings.SEARCH_MEANING_THRESHOLD, measured for the encoder)."""
    return float(getattr(settings, "SEARCH_MEANING_THRESHOLD", 0.43))


def evidence_judged() -> bool:
    """Whether the rule judges the words at all (SEARCH_MEANING_EVIDENCE): off, the old floor
    alone decides."""
    return bool(getattr(settings, "SEARCH_MEANING_EVIDENCE", True))


def word_share_needed() -> float:
    """The least share of a query's content words some document holds for the query to mean
    something here (settings.SEARCH_MEANING_WORD_SHARE)."""
    return float(getattr(settings, "SEARCH_MEANING_WORD_SHARE", 0.4))


def content_words(text: str) -> list[str]:
    """The words of a query that say what it is about: each word of its words and phrases, in
    lower case, once, without English stop words ("how", "the", "of")."""
    words = (word.lower() for clause in parse_text(text) for word in clause.words)
    return [w for w in dict.fromkeys(words) if w not in ENGLISH_STOP_WORDS]


def means_something_here(best_similarity: float, share_of_words_held: Callable[[], float]) -> bool:
    """Whether a query whose nearest document has `best_similarity` is about anything here.
    `share_of_words_held()` (asked only when the similarity passes: it asks the keyword engine)
    is the share of its content words some document holds, 0 when it has none. With
    SEARCH_MEANING_EVIDENCE off, the old floor alone decides (for measuring what the rule
    changes)."""
    if not evidence_judged():
        return True
    if best_similarity < meaning_threshold():
        return False
    share = share_of_words_held()
    return share > 0 and share >= word_share_needed()
