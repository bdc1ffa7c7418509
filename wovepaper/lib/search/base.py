"""The search interface's types: what a collection declares, what a query asks, what a page
answers, and what every backend implements. Imports no app."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any, ClassVar, Generic, TypeVar

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True)
class TextField:
    """Running English text: stemmed, ranked by BM25 (or the database's own ranking)."""

    name: str
    boost: float = 1.0


@dataclass(frozen=True)
class NameField:
    """A person's or an organisation's name: case and accents folded, each query word matched
    as the start of a word in the name ("schr" finds "Schrödinger"). With `initials` (people's
    names), a word of the query other than its last also matches that word's initial alone:
    "Ian Sommerville" finds "I. Sommerville", as bylines abbreviate given names."""

    name: str
    initials: bool = False

    def word_initials(self, words: list[str], *, ends_query: bool = True) -> list[str | None]:
        """Per query word (folded), the initial it may also match, or None. `ends_query`:
        these words end the query (the family name among them), not a clause of it."""
        if not self.initials:
            return [None] * len(words)
        return given_name_initials(words, family_last=ends_query)


def given_name_initials(words: list[str], *, family_last: bool = True) -> list[str | None]:
    """Per word of a person's name as typed ("ian sommerville"), the initial a byline may give
    instead: every word but the last (the family name, when `family_last`), when it is more
    than a letter."""
    family = len(words) - 1 if family_last else len(words)
    return [w[0] if i < family and len(w) > 1 else None for i, w in enumerate(words)]


@dataclass(frozen=True)
class KeywordField:
    """Exact values (one or several per document), for filters: arXiv categories, a country."""

    name: str


@dataclass(frozen=True)
class DateField:
    """A timestamp kept column-wise for sorting and range filters."""

    name: str


@dataclass(frozen=True)
class IntegerField:
    """A number kept column-wise for sorting; unknown (None) sorts after every number."""

    name: str


Field = TextField | NameField | KeywordField | DateField | IntegerField


@dataclass(frozen=True)
class Sort:
    """An order a collection offers: by a date or integer field, or by relevance (`None`)."""

    field: str | None = None
    descending: bool = True


@dataclass(frozen=True)
class Term:
    """Documents whose keyword field `field` holds `value`."""

    field: str
    value: str


@dataclass(frozen=True)
class Range:
    """Documents whose date or integer field lies in [gte, lt); either end may be open."""

    field: str
    gte: datetime | date | int | None = None
    lt: datetime | date | int | None = None

    def date_bounds(self) -> tuple[date | None, date | None]:
        """The bounds of a range over a date field (a datetime is a date); an integer there is
        the caller's mistake, refused rather than compared with dates."""
        gte, lt = self.gte, self.lt
        if isinstance(gte, int) or isinstance(lt, int):
            raise TypeError(f"{self.field} is a date field: its bounds are dates, not numbers")
        return gte, lt


Filter = Term | Range


@dataclass(frozen=True)
class SearchQuery:
    """What to find: words (a "quoted phrase" stays a phrase), filters all of which must hold,
    a sort the collection offers, and the slice of results wanted.

    `any_word`: a document needs only one of the words or phrases, not all, and ranks by how
    well it matches them (hybrid search's keyword side for a long query in other words than
    the paper's: none has every word). Paper search's engines honour it; others ignore it.

    `counted`: False when the caller wants the first ids alone, not how many match (hybrid's
    any-word ranking). An engine may then leave the count out, and the page's `total` is the
    items' number with `total_is_capped` (unless the matches did not fill the page: then
    that number is all of them); tantivy does, as counting every match of common words is
    what kept its top-hits pruning from skipping them."""

    text: str = ""
    filters: tuple[Filter, ...] = ()
    sort: str = "relevance"
    offset: int = 0
    limit: int = 20
    any_word: bool = False
    counted: bool = True

    def clauses(self) -> list[Clause]:
        return parse_text(self.text)


@dataclass
class SearchPage(Generic[T]):
    """One page of results.

    `total` is how many documents match, exactly unless a flag says otherwise:
    `total_is_capped`: counting stopped at `total`, more match ("more than N");
    `approximate`: the engine ranked a bounded pool of candidates rather than every match,
    so the order (and the count past the pool) is an estimate ("about N").
    """

    items: list[T] = field(default_factory=list)
    total: int = 0
    total_is_capped: bool = False
    approximate: bool = False
    # Ranked by meaning (a vector backend, or fused with one), not by the words alone.
    by_meaning: bool = False
    # Each item's relevance score by the engine's own measure (higher is better: BM25 for
    # words, cosine similarity for meaning), when the page is in relevance order and the
    # engine gives one; else empty. Hybrid search fuses by it.
    scores: list[float] = field(default_factory=list)
    # Hybrid search's second part, on its first page: documents whose similarity to the query
    # is above the floor but which do not contain its words (`items` and `total` are those
    # that do), best first, with their cosine similarities.
    related: list[T] = field(default_factory=list)
    related_scores: list[float] = field(default_factory=list)

    def with_items(self, items: list[U], related: list[U] | None = None) -> SearchPage[U]:
        return SearchPage(
            items=items,
            total=self.total,
            total_is_capped=self.total_is_capped,
            approximate=self.approximate,
            by_meaning=self.by_meaning,
            scores=self.scores,
            related=related if related is not None else [],
            related_scores=self.related_scores if related is not None else [],
        )


@dataclass(frozen=True)
class Collection:
    """A kind of thing to search (papers, researchers, institutions), as its app declares it.

    `documents(ids)` gives the engine document (a dict of field values, with "id") of each id
    that should be searchable now; an id it leaves out (deleted, merged away) is removed from
    the engines' indexes. `id_batches(size)` walks every id, for a rebuild, and `count()`
    says about how many there are. `changed_since(when, size)` walks the ids of records
    changed at or after `when` (deleted and merged ones included, so that the engine drops
    them), for the indexer's periodic catch-up. `database` makes the backend used when no engine is
    configured. `vectors`, when set, is where its vectors come from (a
    `wovepaper.lib.search.vectors.VectorSource`): the collection can then be searched by meaning.
    """

    name: str
    fields: tuple[Field, ...]
    sorts: Mapping[str, Sort]
    documents: Callable[[Sequence[int]], Iterable[dict[str, Any]]]
    # (size, after=0): the ids past `after`, ascending, `size` at a time.
    id_batches: Callable[..., Iterable[list[int]]]
    count: Callable[[], int]
    database: Callable[[Collection], SearchBackend]
    vectors: Any = None
    changed_since: Callable[[datetime, int], Iterable[list[int]]] | None = None

    def field_named(self, name: str) -> Field:
        for candidate in self.fields:
            if candidate.name == name:
                return candidate
        raise KeyError(f"{self.name} has no field {name!r}")

    def sort_for(self, name: str) -> Sort:
        return self.sorts.get(name) or next(iter(self.sorts.values()))

    def of(self, kind: type) -> list[Any]:
        return [f for f in self.fields if isinstance(f, kind)]


class SearchBackend(ABC):
    """One engine's search over one collection.

    `search` is the read side, called by web processes. Engines with an index of their own
    also implement the write side, called by the one indexer (a Celery task fed after commit)
    and by `rebuild_search_index`: `index(ids)` makes those ids' documents current and removes
    the ones `Collection.documents` leaves out; `rebuild()` builds the index anew from the
    database. Both are idempotent. Database backends keep no index of their own (FTS5
    triggers, the PostgreSQL document stage), so theirs return 0.
    """

    engine: ClassVar[str] = ""

    def __init__(self, collection: Collection) -> None:
        self.collection = collection

    @abstractmethod
    def search(self, query: SearchQuery) -> SearchPage[int]:
        """Ids of the matching documents in the query's order, for its slice."""

    def matching(self, query: SearchQuery, ids: Sequence[int]) -> set[int]:
        """Which of `ids` match the query's words (every one of them) and filters: hybrid
        search's test of whether a paper related by meaning holds the words, by the engine's
        own analysis, as its keyword page would tell. One query restricted to those ids.
        Engines of collections searched by meaning implement it."""
        raise NotImplementedError(f"{self.engine} cannot restrict a search to given ids")

    def words_held(self, words: Sequence[str]) -> list[bool]:
        """For each word, whether some document holds it, by the engine's own analysis (the
        vocabulary that search by meaning's rule asks, wovepaper.lib.search.evidence); a
        joined word is held when its parts are (`held_by_parts`). Here a first match of each
        part, uncounted; engines that can look a word up override it."""
        return held_by_parts(
            words,
            lambda parts: [
                bool(self.search(SearchQuery(text=part, limit=1, counted=False)).items)
                for part in parts
            ],
        )

    def held(self, ids: Sequence[int]) -> set[int] | None:
        """Those of `ids` the engine holds a document of; None when the engine is the source
        itself (the database), so that there is nothing to compare."""
        return None

    def index(self, ids: Sequence[int]) -> int:
        return 0

    def rebuild(self, *, progress: Callable[[int], None] | None = None) -> int:
        return 0

    def bulk_load(self) -> BulkLoad | None:
        """A writer held across many batches, for a bulk import that feeds the index itself
        (so that its records are searchable when it ends, not when a queue drains); None when
        the engine has no such writer (the caller then sends ids to the indexer as usual).
        Raises BulkLoadBusy when another writer holds the index."""
        return None


class BulkLoadBusy(RuntimeError):
    """Another process holds the index's writer (the search indexer, a rebuild)."""


class BulkLoad(ABC):
    """Documents into an engine's index through one writer kept open across batches; visible
    at each periodic commit and at `close()`. Documents are dicts as `Collection.documents`
    gives them."""

    @abstractmethod
    def replace(self, ids: Sequence[int], documents: Iterable[dict[str, Any]]) -> int:
        """Remove the stored documents of `ids`, add `documents`; returns how many were added."""

    @abstractmethod
    def add_new(self, documents: Sequence[dict[str, Any]]) -> int:
        """Add the documents of records the caller has just created (ids no document can have
        been indexed under yet, unless the index held documents before the load began)."""

    @abstractmethod
    def close(self) -> int:
        """Commit what was added and release the writer; returns how many were added in all."""


# --- query text -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Clause:
    """One part of the query text that a document must match: a word, or a quoted phrase."""

    words: tuple[str, ...]

    @property
    def is_phrase(self) -> bool:
        return len(self.words) > 1


# A word is letters and digits, with inner dots, hyphens, plus signs and apostrophes kept
# (La0.7Sr0.3MnO3, spin-orbit); anything else, query syntax included, only separates words.
_WORD = re.compile(r"[\w][\w.\-+']*", re.UNICODE)
_PHRASE = re.compile(r'"([^"]*)"')
# How many of each ranking's first ids hybrid search fuses (hybrid.py): more than a page's own
# 20 of each. Past the keyword ranking's first FUSED, pages of the documents with the words go on
# in its order.
FUSED = 100
MAX_WORDS = 32


def parse_text(text: str) -> list[Clause]:
    """Words and "quoted phrases" of a query, with every syntax character of every engine
    read as a separator: user input is never passed to an engine's query parser."""
    clauses: list[Clause] = []
    position = 0
    text = text or ""
    if text.count('"') % 2:  # an unclosed quote quotes nothing
        text = text.replace('"', " ")
    for match in _PHRASE.finditer(text):
        clauses += [Clause((w,)) for w in _WORD.findall(text[position : match.start()])]
        words = tuple(_WORD.findall(match[1]))
        if words:
            clauses.append(Clause(words))
        position = match.end()
    clauses += [Clause((w,)) for w in _WORD.findall(text[position:])]
    kept, count = [], 0
    for clause in clauses:
        if count + len(clause.words) > MAX_WORDS:
            break
        kept.append(clause)
        count += len(clause.words)
    return kept


# A run of letters and digits: what tantivy's simple tokenizer and FTS5's unicode61 make a token
# of, and so the parts a joined word (spin-orbit, La0.7Sr0.3MnO3, Schrödinger's) is searched by.
TOKEN = re.compile(r"[^\W_]+")


def is_joined(word: str) -> bool:
    """Whether the engines search the word as a phrase of its parts (spin-orbit)."""
    return len(TOKEN.findall(word)) > 1


def word_parts(word: str) -> list[str]:
    """The parts of a word that say what it is ("self-attention": self, attention;
    "mother's": mother): its runs of letters and digits in lower case, less single characters
    and English stop words, or all of them when that leaves none ("c++")."""
    parts = [part.lower() for part in TOKEN.findall(word)]
    return [p for p in parts if len(p) > 1 and p not in ENGLISH_STOP_WORDS] or parts


def held_by_parts(
    words: Sequence[str], parts_held: Callable[[list[str]], list[bool]]
) -> list[bool]:
    """Whether each word is in the vocabulary, a joined word being held when each of its parts
    is (`word_parts`), side by side or not: the vocabulary is of words, and "self-attention"
    is no more made up than "self attention", which a paper holding both words holds. Whether
    a query is held as written is another test (the rule's second way asks a phrase). One call
    of `parts_held` for the distinct parts of all the words."""
    parts = [word_parts(word) for word in words]
    distinct = list(dict.fromkeys(part for each in parts for part in each))
    held = dict(zip(distinct, parts_held(distinct) if distinct else [], strict=True))
    return [bool(each) and all(held[part] for part in each) for each in parts]


def as_one_phrase(text: str) -> str:
    """The query's words, in their order, as one quoted phrase."""
    return '"' + " ".join(word for clause in parse_text(text) for word in clause.words) + '"'


def with_slice(query: SearchQuery, *, offset: int, limit: int) -> SearchQuery:
    return replace(query, offset=offset, limit=limit)
