"""The cluster engine: OpenSearch through opensearch-py, for deployments past one machine.

The same collections, documents and analysis as the tantivy engine: English text stemmed with
stop words dropped, names folded and matched by word prefix, keywords exact, dates and counts
as doc values for sorting. Each collection is an alias (`<prefix>-<collection>`) over one
concrete index: a rebuild fills a new index and moves the alias in one `_aliases` call, so
searches never see a half-built index (the new documents become visible within the index's
refresh interval, 1 s by default). Counting stops at OpenSearch's default of 10,000
(`track_total_hits`), reported as "more than".
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, time
from typing import Any

from opensearchpy import NotFoundError, OpenSearch
from opensearchpy.helpers import streaming_bulk

from .base import (
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
)

BULK_CHUNK = 1_000
TIMEOUT_SECONDS = 5
ANALYSIS = {
    "analyzer": {
        "wovepaper_text": {
            "type": "custom",
            "tokenizer": "standard",
            "filter": ["lowercase", "asciifolding", "english_stop", "english_stemmer"],
        },
        "wovepaper_name": {
            "type": "custom",
            "tokenizer": "standard",
            "filter": ["lowercase", "asciifolding"],
        },
    },
    "filter": {
        "english_stop": {"type": "stop", "stopwords": "_english_"},
        "english_stemmer": {"type": "stemmer", "language": "english"},
    },
}


def mappings(collection: Collection) -> dict[str, Any]:
    """The index body for a collection: analysis settings and one mapping per field."""
    properties: dict[str, Any] = {"id": {"type": "long"}}
    for f in collection.fields:
        if isinstance(f, TextField):
            properties[f.name] = {"type": "text", "analyzer": "wovepaper_text"}
        elif isinstance(f, NameField):
            properties[f.name] = {"type": "text", "analyzer": "wovepaper_name"}
        elif isinstance(f, KeywordField):
            properties[f.name] = {"type": "keyword"}
        elif isinstance(f, DateField):
            properties[f.name] = {"type": "date"}
        elif isinstance(f, IntegerField):
            properties[f.name] = {"type": "long"}
    return {
        "settings": {"analysis": ANALYSIS},
        "mappings": {"dynamic": "strict", "properties": properties},
    }


def _fold(word: str) -> str:
    # What the name analyzer does to indexed words, for prefix queries (which are not analysed).
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _as_datetime(value: datetime | date) -> str:
    if not isinstance(value, datetime):
        value = datetime.combine(value, time.min, tzinfo=UTC)
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()


class OpenSearchBackend(SearchBackend):
    engine = "opensearch"

    def __init__(
        self, collection: Collection, *, url: str, prefix: str, client: OpenSearch | None = None
    ) -> None:
        super().__init__(collection)
        self.alias = f"{prefix}-{collection.name}"
        self.client = client or OpenSearch(
            hosts=[url], timeout=TIMEOUT_SECONDS, max_retries=2, retry_on_timeout=True
        )

    # --- read side ----------------------------------------------------------------------------

    def request_body(self, query: SearchQuery) -> dict[str, Any] | None:
        """The _search body for `query`, or None when it can match nothing."""
        musts: list[dict[str, Any]] = []
        if query.text.strip():
            clauses = query.clauses()
            if not clauses:
                return None
            musts = [
                self._clause(clause, ends_query=number == len(clauses))
                for number, clause in enumerate(clauses, start=1)
            ]
            if query.any_word and len(musts) > 1:
                musts = [{"bool": {"should": musts, "minimum_should_match": 1}}]
        filters = [self._filter(f) for f in query.filters]
        if not musts and not filters:
            return None
        sort = self.collection.sort_for(query.sort)
        order: list[Any] = ["_score"]
        if sort.field:
            direction = "desc" if sort.descending else "asc"
            order = [
                {sort.field: {"order": direction, "missing": "_last"}},
                {"id": {"order": direction}},
            ]
        return {
            "query": {"bool": {"must": musts or [{"match_all": {}}], "filter": filters}},
            "sort": order,
            "from": query.offset,
            "size": query.limit,
            "_source": False,
            "track_total_hits": 10_000,
        }

    def search(self, query: SearchQuery) -> SearchPage[int]:
        body = self.request_body(query)
        if body is None:
            return SearchPage()
        answer = self.client.search(index=self.alias, body=body)
        return parse_search_answer(answer)

    def matching_body(self, query: SearchQuery, ids: Sequence[int]) -> dict[str, Any] | None:
        """The _search body for which of `ids` match the query (see `matching`)."""
        body = self.request_body(
            replace(query, any_word=False, sort="relevance", offset=0, limit=len(ids))
        )
        if body is None or not ids or not query.text.strip():
            return None
        body["query"]["bool"]["filter"].append({"ids": {"values": [str(i) for i in ids]}})
        body["track_total_hits"] = False
        return body

    def held(self, ids: Sequence[int]) -> set[int] | None:
        if not ids:
            return set()
        body = {"query": {"ids": {"values": [str(i) for i in ids]}}, "_source": False}
        answer = self.client.search(index=self.alias, body={**body, "size": len(ids)})
        return {int(hit["_id"]) for hit in answer["hits"]["hits"]}

    def matching(self, query: SearchQuery, ids: Sequence[int]) -> set[int]:
        body = self.matching_body(query, ids)
        if body is None:
            return set()
        return set(parse_search_answer(self.client.search(index=self.alias, body=body)).items)

    def _clause(self, clause: Clause, *, ends_query: bool) -> dict[str, Any]:
        text = " ".join(clause.words)
        alternatives: list[dict[str, Any]] = []
        text_fields = [f"{f.name}^{f.boost:g}" for f in self.collection.of(TextField)]
        if text_fields:
            alternatives.append(
                {
                    "multi_match": {
                        "query": text,
                        "fields": text_fields,
                        # a split word (spin-orbit) is a phrase too, as in the other engines
                        "type": "phrase",
                    }
                }
            )
        for f in self.collection.of(NameField):
            words = [_fold(w) for w in text.split() if _fold(w)]
            prefixes: list[dict[str, Any]] = [
                {"prefix": {f.name: w}}
                if initial is None
                else {"bool": {"should": [{"prefix": {f.name: w}}, {"term": {f.name: initial}}]}}
                for w, initial in zip(
                    words, f.word_initials(words, ends_query=ends_query), strict=True
                )
            ]
            alternatives.append({"bool": {"must": prefixes}})
        if len(alternatives) == 1:
            return alternatives[0]
        return {"bool": {"should": alternatives, "minimum_should_match": 1}}

    def _filter(self, condition: Term | Range) -> dict[str, Any]:
        if isinstance(condition, Term):
            return {"term": {condition.field: condition.value}}
        kind = self.collection.field_named(condition.field)
        bounds: dict[str, Any] = {}
        if isinstance(kind, DateField):
            gte, lt = condition.date_bounds()
            for name, day in (("gte", gte), ("lt", lt)):
                if day is not None:
                    bounds[name] = _as_datetime(day)
        else:
            for name, value in (("gte", condition.gte), ("lt", condition.lt)):
                if value is not None:
                    bounds[name] = value
        return {"range": {condition.field: bounds}}

    # --- write side ---------------------------------------------------------------------------

    def _actions(self, index: str, ids: Sequence[int], *, deletes: bool) -> Iterator[dict]:
        documents = {int(d["id"]): d for d in self.collection.documents(ids)}
        for item_id in ids:
            values = documents.get(int(item_id))
            if values is None:
                if deletes:
                    yield {"_op_type": "delete", "_index": index, "_id": str(item_id)}
                continue
            yield {
                "_op_type": "index",
                "_index": index,
                "_id": str(item_id),
                "_source": self.source(values),
            }

    def source(self, values: dict[str, Any]) -> dict[str, Any]:
        source: dict[str, Any] = {"id": int(values["id"])}
        for f in self.collection.fields:
            value = values.get(f.name)
            if isinstance(f, DateField) and value is not None:
                value = _as_datetime(value)
            source[f.name] = value
        return source

    def _bulk(self, actions: Iterable[dict]) -> int:
        written = 0
        for ok, item in streaming_bulk(
            self.client,
            actions,
            chunk_size=BULK_CHUNK,
            raise_on_error=False,
            raise_on_exception=True,
        ):
            operation, result = next(iter(item.items()))
            if ok and operation != "delete":
                written += 1
            elif not ok and not (operation == "delete" and result.get("status") == 404):
                raise RuntimeError(
                    f"OpenSearch refused {operation} of {result.get('_id')}: {result.get('error')}"
                )
        return written

    def index(self, ids: Sequence[int]) -> int:
        if not ids:
            return 0
        return self._bulk(self._actions(self.alias, ids, deletes=True))

    def rebuild(self, *, progress: Callable[[int], None] | None = None) -> int:
        """A new index filled from the database, then the alias moved onto it at once; the
        indexes it replaces are deleted afterwards."""
        name = f"{self.alias}-{datetime.now(UTC):%Y%m%d%H%M%S}"
        self.client.indices.create(index=name, body=mappings(self.collection))
        written = 0
        for ids in self.collection.id_batches(BULK_CHUNK * 5):
            written += self._bulk(self._actions(name, ids, deletes=False))
            if progress:
                progress(len(ids))
        try:
            previous = list(self.client.indices.get_alias(name=self.alias))
        except NotFoundError:
            previous = []
        actions: list[dict] = [{"remove": {"index": old, "alias": self.alias}} for old in previous]
        actions.append({"add": {"index": name, "alias": self.alias}})
        self.client.indices.update_aliases(body={"actions": actions})
        for old in previous:
            self.client.indices.delete(index=old)
        return written


def parse_search_answer(answer: dict[str, Any]) -> SearchPage[int]:
    """Ids (our documents' `_id` is the database id) and total of a _search answer."""
    hits = answer["hits"]
    total = hits.get("total") or {}
    if isinstance(total, int):  # answers of clusters with rest_total_hits_as_int
        total = {"value": total, "relation": "eq"}
    scores = [hit.get("_score") for hit in hits["hits"]]
    return SearchPage(
        items=[int(hit["_id"]) for hit in hits["hits"]],
        total=int(total.get("value", 0)),
        total_is_capped=total.get("relation") == "gte",
        # A field sort leaves _score null: then there is no relevance score to give.
        scores=[float(s) for s in scores] if None not in scores else [],
    )
