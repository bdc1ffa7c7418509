"""The one-machine engine: a tantivy index per collection in a directory on local disk.

BM25 over stemmed text, fast (column-wise) fields for dates and counts so that any sort reads
only the top hits, exact match counts. One process writes (the search indexer: a Celery worker
of concurrency 1 on the `search` queue, or the rebuild command; tantivy's own lock file turns
a second writer away); every web process reads, and its reader reloads itself when the writer
commits. The database stays the source of truth: the index is rebuilt from it at any time.

The directory of a collection is named after a fingerprint of its fields, so a change to the
fields starts an empty index beside the old one instead of misreading it: rebuild after such
a deploy (`python manage.py rebuild_search_index`).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

import tantivy

from .base import (
    BulkLoad,
    BulkLoadBusy,
    Clause,
    Collection,
    DateField,
    IntegerField,
    KeywordField,
    NameField,
    Range,
    SearchBackend,
    SearchPage,
    SearchQuery,
    Term,
    TextField,
    held_by_parts,
)

logger = logging.getLogger(__name__)

TEXT_TOKENIZER = "wovepaper_text"
NAME_TOKENIZER = "wovepaper_name"
# Unknown integers (a paper nobody has counted citations for yet) are stored as this, below
# every real count, so that they come last in a descending sort.
MISSING_INTEGER = -1
# An unknown date (a recorded paper whose submission date no public record gives) is stored
# as the earliest day tantivy's nanosecond dates can hold, before every real paper: the year
# 1 is out of its range and made every rebuild over such a paper fail.
MISSING_DATE = datetime(1678, 1, 1, tzinfo=UTC)
WRITER_HEAP = 64_000_000
REBUILD_BATCH = 5_000
# Offsets past this are checked against the match count before the engine collects them.
DEEP_OFFSET = 10_000
# A bulk load commits after this many documents, so that a long import's papers become
# searchable (and durable in the index) as it goes, not only at its end.
BULK_COMMIT_EVERY = 250_000


# The any-word ranking (hybrid's fallback) leaves out the words held by more than this share
# of the documents, keeping at least ANY_WORD_KEEP of the rarest: their postings are most of
# what a union of a paraphrase's words reads, and grow with the archive, while their weight in
# BM25 (the inverse document frequency) is the lowest of the query's.
ANY_WORD_COMMON_SHARE = 0.2
ANY_WORD_KEEP = 2


def _without_the_commonest(
    clauses: list[tuple[list[tantivy.Query], int]], documents: int
) -> list[list[tantivy.Query]]:
    """The alternatives of the clauses an any-word ranking keeps (see ANY_WORD_COMMON_SHARE)."""
    rarest_first = sorted(clauses, key=lambda clause: clause[1])
    kept = [
        alternatives
        for number, (alternatives, frequency) in enumerate(rarest_first)
        if number < ANY_WORD_KEEP or frequency <= ANY_WORD_COMMON_SHARE * documents
    ]
    return kept


def _folded_words() -> tantivy.TextAnalyzerBuilder:
    """Words as both analyzers see them: split at anything not alphanumeric, overlong ones
    dropped, lower case, accents folded."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
    )


def text_analyzer() -> tantivy.TextAnalyzer:
    # Close to PostgreSQL's 'english' configuration: lower case, accents folded, English stop
    # words dropped, Snowball English stems.
    return (
        _folded_words()
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _name_analyzer() -> tantivy.TextAnalyzer:
    # Names are neither stemmed nor stripped of short words ("Le", "An").
    return _folded_words().build()


def _schema(collection: Collection) -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    # i64, not u64: tantivy-py turns a Python int into an i64 term, so deleting by a u64
    # id would match nothing.
    builder.add_integer_field("id", indexed=True, fast=True)
    for f in collection.fields:
        if isinstance(f, TextField):
            builder.add_text_field(f.name, tokenizer_name=TEXT_TOKENIZER)
        elif isinstance(f, NameField):
            builder.add_text_field(f.name, tokenizer_name=NAME_TOKENIZER)
        elif isinstance(f, KeywordField):
            builder.add_text_field(f.name, tokenizer_name="raw", index_option="basic")
        elif isinstance(f, DateField):
            builder.add_date_field(f.name, indexed=True, fast=True)
        elif isinstance(f, IntegerField):
            builder.add_integer_field(f.name, indexed=True, fast=True)
    return builder.build()


def _fingerprint(collection: Collection) -> str:
    described = repr((tantivy.__name__, TEXT_TOKENIZER, NAME_TOKENIZER, collection.fields))
    return hashlib.sha1(described.encode()).hexdigest()[:10]


def _as_datetime(value: datetime | date | None) -> datetime:
    if value is None:
        return MISSING_DATE
    if not isinstance(value, datetime):
        value = datetime.combine(value, time.min)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


_TEXT, _KEYWORD, _DATE, _INTEGER = "text", "keyword", "date", "integer"


def _field_kind(f: object) -> str | None:
    if isinstance(f, TextField | NameField):
        return _TEXT
    if isinstance(f, KeywordField):
        return _KEYWORD
    if isinstance(f, DateField):
        return _DATE
    if isinstance(f, IntegerField):
        return _INTEGER
    return None


class TantivyBackend(SearchBackend):
    engine = "tantivy"

    def __init__(self, collection: Collection, *, directory: str | Path) -> None:
        super().__init__(collection)
        self.path = Path(directory) / f"{collection.name}-{_fingerprint(collection)}"
        self.path.mkdir(parents=True, exist_ok=True)
        self.schema = _schema(collection)
        self.index_ = tantivy.Index(self.schema, path=str(self.path), reuse=True)
        self.text_analyzer = text_analyzer()
        self.name_analyzer = _name_analyzer()
        self.index_.register_tokenizer(TEXT_TOKENIZER, self.text_analyzer)
        self.index_.register_tokenizer(NAME_TOKENIZER, self.name_analyzer)
        self._write_lock = threading.Lock()
        self._plan = [
            (kind, f.name) for f in collection.fields if (kind := _field_kind(f)) is not None
        ]

    # --- read side ----------------------------------------------------------------------------

    def search(self, query: SearchQuery) -> SearchPage[int]:
        searcher = self.index_.searcher()
        matcher = self._matcher(query, searcher)
        if matcher is None:
            return SearchPage()
        sort = self.collection.sort_for(query.sort)
        if query.offset > DEEP_OFFSET:
            # tantivy keeps offset + limit hits in memory: past the matches, count and stop
            # instead of holding a hand-typed page number's worth of them.
            # tantivy's stub lacks SearchResult.count (set when searching with count=True).
            total = searcher.search(matcher, limit=1, count=True).count or 0  # type: ignore[attr-defined]
            if query.offset >= total:
                return SearchPage(total=total)
        options: dict[str, Any] = {
            "limit": max(query.limit, 1),
            "offset": query.offset,
            # Counting visits every match; without it tantivy's top-hits collector skips the
            # blocks that cannot reach the first `limit` (block-max WAND): the same hits.
            "count": query.counted,
        }
        if sort.field:
            options["order_by_field"] = sort.field
            options["order"] = tantivy.Order.Desc if sort.descending else tantivy.Order.Asc
        result = searcher.search(matcher, **options)
        hits = result.hits[: query.limit]
        addresses = [address for _, address in hits]
        ids = searcher.fast_field_values("id", addresses) if addresses else []
        found = [
            (int(i), float(score)) for i, (score, _) in zip(ids, hits, strict=True) if i is not None
        ]
        if query.counted:
            total = result.count or 0  # type: ignore[attr-defined]  # as above
        else:
            total = query.offset + len(found)
        return SearchPage(
            items=[i for i, _ in found],
            total=total,
            # Uncounted, a page the matches did not fill holds them all: its total is exact.
            total_is_capped=not query.counted and len(hits) >= query.limit,
            scores=[score for _, score in found] if not sort.field else [],
        )

    def held(self, ids: Sequence[int]) -> set[int] | None:
        if not ids:
            return set()
        searcher = self.index_.searcher()
        among = tantivy.Query.term_set_query(self.schema, "id", [int(i) for i in ids])
        hits = searcher.search(among, limit=len(ids), count=False).hits
        found = searcher.fast_field_values("id", [address for _, address in hits])
        return {int(i) for i in found if i is not None}

    def matching(self, query: SearchQuery, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        searcher = self.index_.searcher()
        # The ids as a union of single terms (a term-set query walks every segment's term
        # dictionary: 0.9 ms for 100 ids at 1M papers, against 0.14), leading one flat
        # intersection with the query's clauses.
        among = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "id", int(i)))
                for i in ids
            ]
        )
        matcher = self._matcher(replace(query, any_word=False), searcher, among=among)
        if matcher is None:
            return set()
        hits = searcher.search(matcher, limit=len(ids), count=False).hits
        found = searcher.fast_field_values("id", [address for _, address in hits])
        return {int(i) for i in found if i is not None}

    def _matcher(
        self,
        query: SearchQuery,
        searcher: tantivy.Searcher,
        *,
        among: tantivy.Query | None = None,
    ) -> tantivy.Query | None:
        """The query's clauses (each in any of its fields) and filters, all of which must hold;
        with `among` (a few documents: `matching`), only those, and each phrase's fields
        searched among them one by one. tantivy moves a union of phrases forward a window of
        documents at a time, checking every phrase in it: a common phrase's fields, each
        within 100 documents, take 0.5 ms at 1M papers, their union within them 2.5 ms."""
        musts: list[tantivy.Query] = []
        # Each clause's alternatives, with how many documents hold it (any_word only).
        every_clause: list[tuple[list[tantivy.Query], int]] = []
        clauses = query.clauses()
        if query.text.strip() and not clauses:
            return None  # only punctuation: nothing to look for
        for number, clause in enumerate(clauses, start=1):
            alternatives = self._clause_alternatives(
                clause, ends_query=number == len(clauses), among=among
            )
            if alternatives is None:
                continue  # stop words alone match everywhere: they constrain nothing
            if not alternatives:
                return None
            if query.any_word:
                every_clause.append((alternatives, self._document_frequency(clause, searcher)))
            musts.append(
                alternatives[0]
                if len(alternatives) == 1
                else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in alternatives])
            )
        if query.text.strip() and not musts:
            return None  # PostgreSQL and FTS5 find nothing for stop words alone either
        if query.any_word and len(musts) > 1:
            # One flat union of every clause's alternatives, not a union of per-clause unions:
            # the same matches and scores (a sum either way), but tantivy's top-hits pruning
            # works on the flat one: 3.1 ms of CPU against 6.8 ms (p50), the same first 20 ids,
            # for the paraphrases of benchmarks/data/ at 300,000 papers, side by side.
            kept = _without_the_commonest(every_clause, searcher.num_docs)
            musts = [
                tantivy.Query.boolean_query(
                    [(tantivy.Occur.Should, q) for alternatives in kept for q in alternatives]
                )
            ]
        musts += [self._filter(f) for f in query.filters]
        if among is not None:
            musts.insert(0, among)
        if not musts:
            return None
        if len(musts) == 1:
            return musts[0]
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in musts])

    def words_held(self, words: Sequence[str]) -> list[bool]:
        """Each part of the words (base.held_by_parts) looked up in the term dictionaries, as
        the fields analyse it: held when every term it makes is in one of the text fields
        (stemmed: "running" is held where "runs" is) or in one of the name fields (as
        written)."""
        searcher = self.index_.searcher()

        def in_fields(terms: list[str], fields: list[str]) -> bool:
            return bool(terms) and all(
                any(searcher.doc_freq(name, term) for name in fields) for term in terms
            )

        text_fields = [f.name for f in self.collection.of(TextField)]
        name_fields = [f.name for f in self.collection.of(NameField)]
        return held_by_parts(
            words,
            lambda parts: [
                in_fields(self.text_analyzer.analyze(part), text_fields)
                or in_fields(self.name_analyzer.analyze(part), name_fields)
                for part in parts
            ],
        )

    def _document_frequency(self, clause: Clause, searcher: tantivy.Searcher) -> int:
        """How many documents hold the clause's word in one of the text fields (at most: the
        largest field's count); 0 for a phrase, which is never among the commonest."""
        tokens = self.text_analyzer.pre_tokenize(" ".join(clause.words)).tokens
        if len(tokens) != 1:
            return 0
        return max(
            (searcher.doc_freq(f.name, tokens[0].text) for f in self.collection.of(TextField)),
            default=0,
        )

    def _clause_alternatives(
        self, clause: Clause, *, ends_query: bool, among: tantivy.Query | None = None
    ) -> list[tantivy.Query] | None:
        """The queries, one per searchable field, any of which matches the clause; None when
        the clause is made of stop words only. `ends_query`: the query's last clause.
        `among` (`matching`'s few documents): a phrase's queries each restricted to them."""
        alternatives: list[tantivy.Query] = []
        text = " ".join(clause.words)
        text_fields = self.collection.of(TextField)
        if text_fields:
            tokens = [(t.position, t.text) for t in self.text_analyzer.pre_tokenize(text).tokens]
            if not tokens:
                return None
            for f in text_fields:
                q = self._terms_query(f.name, tokens)
                if among is not None and len(tokens) > 1:
                    # A phrase, searched within `among` field by field (`_matcher`).
                    q = tantivy.Query.boolean_query(
                        [(tantivy.Occur.Must, among), (tantivy.Occur.Must, q)]
                    )
                alternatives.append(q if f.boost == 1 else tantivy.Query.boost_query(q, f.boost))
        for f in self.collection.of(NameField):
            words = self.name_analyzer.analyze(text)
            if not words:
                continue
            # Each word of the query starts a word of the name, in any order (or is it, by
            # its initial: NameField.initials).
            prefixes = [
                self._prefix_or_initial(f.name, w, i)
                for w, i in zip(words, f.word_initials(words, ends_query=ends_query), strict=True)
            ]
            alternatives.append(
                prefixes[0]
                if len(prefixes) == 1
                else tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in prefixes])
            )
        return alternatives

    def _prefix_or_initial(self, field: str, word: str, initial: str | None) -> tantivy.Query:
        """The name words that start with `word`, or are `initial`, each scoring 1.
        The prefix is a Levenshtein automaton of distance 0: a regex query ("word.*|i", what
        this was) compiles its automaton when it is built, 0.17 ms each, several per name
        search of every search page; this one is built in under a microsecond."""
        prefix = tantivy.Query.fuzzy_term_query(
            self.schema, field, word, distance=0, transposition_cost_one=True, prefix=True
        )
        if not initial:
            return prefix
        exactly = tantivy.Query.term_query(self.schema, field, initial)
        # Either one, scoring 1 as the automaton's matches do (not a sum of two).
        return tantivy.Query.disjunction_max_query(
            [prefix, tantivy.Query.const_score_query(exactly, 1.0)]
        )

    def _terms_query(self, field: str, tokens: list[tuple[int, str]]) -> tantivy.Query:
        if len(tokens) == 1:
            return tantivy.Query.term_query(self.schema, field, tokens[0][1])
        # A phrase, or one word the tokenizer splits (spin-orbit): its tokens in order, stop
        # words' positions left as gaps.
        first = tokens[0][0]
        return tantivy.Query.phrase_query(
            self.schema, field, [(position - first, text) for position, text in tokens]
        )

    def _filter(self, condition: Term | Range) -> tantivy.Query:
        kind = self.collection.field_named(condition.field)
        if isinstance(condition, Term):
            return tantivy.Query.term_query(self.schema, condition.field, condition.value)
        if isinstance(kind, DateField):
            field_type = tantivy.FieldType.Date
            # tantivy's stub types range bounds as int; a Date field's are datetimes.
            lower: Any
            upper: Any
            gte, lt = condition.date_bounds()
            lower = _as_datetime(gte) if gte is not None else None
            upper = _as_datetime(lt) if lt is not None else None
        else:
            field_type = tantivy.FieldType.Integer
            lower, upper = condition.gte, condition.lt
        return tantivy.Query.range_query(
            self.schema,
            condition.field,
            field_type,
            lower,
            upper,
            include_lower=True,
            include_upper=upper is None,  # an open end must be inclusive to tantivy
        )

    # --- write side ---------------------------------------------------------------------------

    def _document(self, values: dict[str, Any]) -> tantivy.Document:
        document = tantivy.Document()
        document.add_integer("id", int(values["id"]))
        # Field kinds sorted once (self._plan), not by isinstance for every field of every
        # document: a bulk import builds millions of these.
        for kind, name in self._plan:
            value = values.get(name)
            if kind is _TEXT:
                if value:
                    document.add_text(name, value)
            elif kind is _KEYWORD:
                for item in [value] if isinstance(value, str) else value or []:
                    document.add_text(name, item)
            elif kind is _DATE:
                document.add_date(name, _as_datetime(value))
            else:
                document.add_integer(name, MISSING_INTEGER if value is None else int(value))
        return document

    def index(self, ids: Sequence[int]) -> int:
        """Replace the documents of `ids` with their current versions (or none), in one commit."""
        if not ids:
            return 0
        documents = list(self.collection.documents(ids))
        with self._one_commit(WRITER_HEAP) as writer:
            for paper_id in ids:
                writer.delete_documents_by_term("id", int(paper_id))
            for values in documents:
                writer.add_document(self._document(values))
        return len(documents)

    def rebuild(self, *, progress: Callable[[int], None] | None = None) -> int:
        """Every document anew from the database, in one commit: until it lands, searches
        read the previous index whole; an interrupted rebuild leaves that index as it was."""
        written = 0
        with self._one_commit(WRITER_HEAP * 4) as writer:
            writer.delete_all_documents()
            for ids in self.collection.id_batches(REBUILD_BATCH):
                written += self._add(writer, self.collection.documents(ids))
                if progress:
                    progress(len(ids))
        return written

    @contextmanager
    def _one_commit(self, heap_size: int) -> Iterator[tantivy.IndexWriter]:
        """A writer whose changes land in one commit when the block ends, or none of them
        when it raises; then this process's reader sees them."""
        with self._write_lock:
            writer = self.index_.writer(heap_size=heap_size, num_threads=1)
            try:
                yield writer
                writer.commit()
            except BaseException:
                writer.rollback()
                raise
            finally:
                writer.wait_merging_threads()
        self.index_.reload()

    def bulk_load(self) -> TantivyBulkLoad:
        return TantivyBulkLoad(self)

    def _add(self, writer: tantivy.IndexWriter, documents: Iterable[dict[str, Any]]) -> int:
        count = 0
        for values in documents:
            writer.add_document(self._document(values))
            count += 1
        return count

    def document_count(self) -> int:
        return self.index_.searcher().num_docs


class TantivyBulkLoad(BulkLoad):
    """One writer for a whole bulk import (the snapshot's first load): documents go in as each
    batch commits in the database, tantivy's own thread indexes them beside the import, and
    the load commits every BULK_COMMIT_EVERY documents and at `close()`. It holds the
    index's lock throughout, so the search indexer's tasks wait (they retry) until it ends.
    """

    def __init__(self, backend: TantivyBackend) -> None:
        self.backend = backend
        self.added = 0
        self._since_commit = 0
        if not backend._write_lock.acquire(timeout=5):
            raise BulkLoadBusy(f"{backend.path}: another writer in this process")
        try:
            # Into an empty index a new record's id has nothing to replace: its delete
            # operation, which tantivy applies to every segment at each commit, is skipped.
            self._was_empty = backend.document_count() == 0
            self.writer = backend.index_.writer(heap_size=WRITER_HEAP * 4, num_threads=1)
        except ValueError as exc:  # tantivy's lock file: a writer in another process
            backend._write_lock.release()
            raise BulkLoadBusy(f"{backend.path}: {exc}") from exc
        except BaseException:
            backend._write_lock.release()
            raise

    def replace(self, ids: Sequence[int], documents: Iterable[dict[str, Any]]) -> int:
        for record_id in ids:
            self.writer.delete_documents_by_term("id", int(record_id))
        return self._added(self.backend._add(self.writer, documents))

    def add_new(self, documents: Sequence[dict[str, Any]]) -> int:
        if not self._was_empty:
            return self.replace([d["id"] for d in documents], documents)
        return self._added(self.backend._add(self.writer, documents))

    def _added(self, count: int) -> int:
        self.added += count
        self._since_commit += count
        if self._since_commit >= BULK_COMMIT_EVERY:
            self.writer.commit()
            self._since_commit = 0
            self.backend.index_.reload()
        return count

    def close(self) -> int:
        try:
            self.writer.commit()
            self.writer.wait_merging_threads()
        finally:
            self.backend._write_lock.release()
        self.backend.index_.reload()
        return self.added
