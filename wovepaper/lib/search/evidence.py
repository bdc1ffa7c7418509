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
  holds each, as the keyword engine says; a joined word, "self-attention", when each of its
  parts is, base.held_by_parts): at least one, and a share of its content words (the
  English stop words left out) of at least `SEARCH_MEANING_WORD_SHARE`. Made-up words
  ("zzzqqqxx", "plimbo zentrix") land the encoder near some paper (0.41, 0.37) for no reason;
  no paper holds them, and "zib zab zoob" is no nearer to meaning something for one paper
  holding "zab".
- its best hit: the cosine similarity of its nearest paper is at least
  `SEARCH_MEANING_THRESHOLD`. Queries from everyday life and other fields ("cheap flights to
  paris", "baroque counterpoint") have real words but no paper near them; a question about a
  paper here has that paper, or one like it, well above them.
- or, when its best hit is below that, the two rankings agree: one of the
  `SEARCH_MEANING_NEAREST_HOLDING` (101, the pool a first page reads) papers nearest in
  meaning holds the query as written, its words in their order (a phrase search of the
  keyword engine). A phrase of one to three words ("thin films", "oort cloud") lies further
  from any abstract than a question does, below the threshold though papers here are about
  it; an everyday word a paper holds in another sense is rarely what the encoder places near
  it. Holding every word anywhere was not enough: "contract law" found a paper on futures
  contracts and power laws. Looking at a page's 10 nearest only (until 2026-12-07) left a
  phrase whose papers the encoder ranks lower with nothing ("full counting statistics": the
  sample's paper holding it is its 27th nearest); those 10 are still looked at first, and
  where some of them hold the query, they are the ones that fix its sense. A document
  holding it below `SEARCH_SIMILARITY_FLOOR` is no nearer than chance and no evidence.

A query that passes keeps the papers the vector ranking finds, in its order, down to
`SEARCH_SIMILARITY_FLOOR` (0.15: well under any tuning question's own paper, 0.228 at the
least, and above a random paper's usual similarity, 0.06); one that fails has nothing related.
One that passes only by the agreement keeps those papers that are also near one of the papers
holding it (cosine at least `SEARCH_MEANING_SENSE_SIMILARITY`): the words say in which
sense the query is meant, where the encoder reads a short phrase by its commonest word ("oort
cloud" lies as near to cloud computing as to the papers on the Oort cloud).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.conf import settings
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from .base import parse_text

# How many of the nearest documents are looked at first for one holding the query as written: a
# page's. Only where none of them does are the rest of SEARCH_MEANING_NEAREST_HOLDING asked.
FIRST_LOOK = 10


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


def nearest_looked_at() -> int:
    """How many of the nearest papers are looked at for one that holds the query as written
    (settings.SEARCH_MEANING_NEAREST_HOLDING); 0: the similarity alone decides."""
    return int(getattr(settings, "SEARCH_MEANING_NEAREST_HOLDING", 101))


def sense_similarity() -> float:
    """The least cosine similarity to a paper holding a query's words for another paper to be
    related to it in that sense (settings.SEARCH_MEANING_SENSE_SIMILARITY)."""
    return float(getattr(settings, "SEARCH_MEANING_SENSE_SIMILARITY", 0.35))


def content_words(text: str) -> list[str]:
    """The words of a query that say what it is about: each word of its words and phrases, in
    lower case, once, without English stop words ("how", "the", "of")."""
    words = (word.lower() for clause in parse_text(text) for word in clause.words)
    return [w for w in dict.fromkeys(words) if w not in ENGLISH_STOP_WORDS]


@dataclass(frozen=True)
class Meaning:
    """The rule's answer for a query: whether it means something here and, when it does only
    because papers nearest to it hold it as written, those papers (the sense it is meant in)."""

    here: bool
    sense: tuple[int, ...] = ()


def means_something_here(
    best_similarity: float,
    share_of_words_held: Callable[[], float],
    nearest_holding_the_query: Callable[[int, int], Sequence[int]] | None = None,
) -> Meaning:
    """Whether a query whose nearest document has `best_similarity` is about anything here.
    `share_of_words_held()` is the share of its content words some document holds, 0 when it
    has none; `nearest_holding_the_query(start, end)`, those of its nearest documents from
    `start` to `end` (in order of nearness) that hold it as written (asked only when the
    nearest is not close enough). Both ask the keyword engine.
    With SEARCH_MEANING_EVIDENCE off, the old floor alone decides (for measuring what the rule
    changes)."""
    if not evidence_judged():
        return Meaning(True)
    if best_similarity >= meaning_threshold():
        return Meaning(_enough_words_held(share_of_words_held))
    looked_at = nearest_looked_at()
    if nearest_holding_the_query is None or looked_at <= 0:
        return Meaning(False)
    # A page's nearest first: where some of them hold the query, they alone fix its sense and
    # the deeper ones are not asked (at 1M papers a phrase search among 101 documents took
    # 0.8-2.1 ms, among 10 0.3-0.4).
    first = min(FIRST_LOOK, looked_at)
    sense = tuple(nearest_holding_the_query(0, first))
    if not sense and looked_at > first:
        sense = tuple(nearest_holding_the_query(first, looked_at))
    # The vocabulary is asked only when one of them holds the query: else nothing is related
    # whatever it says.
    if not sense or not _enough_words_held(share_of_words_held):
        return Meaning(False)
    return Meaning(True, sense)


def _enough_words_held(share_of_words_held: Callable[[], float]) -> bool:
    share = share_of_words_held()
    return share > 0 and share >= word_share_needed()
