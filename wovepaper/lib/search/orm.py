"""What the collections' database sides share: walking ids, slicing a queryset into a page,
and turning a page of ids into model instances."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from itertools import islice
from typing import Any

from django.db.models import Model, Q, QuerySet

from .base import SearchPage, SearchQuery


def id_batches(queryset: QuerySet, size: int, *, after: int = 0) -> Iterator[list[int]]:
    """Every primary key of `queryset` past `after`, ascending, in batches of `size` (keyset
    paging: each batch is one range scan of the primary key, however far the walk has gone)."""
    last = after or None
    while True:
        page = queryset.order_by("pk")
        if last is not None:
            page = page.filter(pk__gt=last)
        ids = list(page.values_list("pk", flat=True)[:size])
        if not ids:
            return
        yield ids
        last = ids[-1]


def changed_id_batches(queryset: QuerySet, since: datetime, size: int) -> Iterator[list[int]]:
    """The primary keys of the rows of `queryset` modified at or after `since` (`modified_at`,
    indexed), in batches of `size`: one range scan of that index, streamed."""
    ids = queryset.filter(modified_at__gte=since).values_list("pk", flat=True)
    stream = ids.iterator(chunk_size=size)
    while batch := list(islice(stream, size)):
        yield batch


def each_word(lookup: str, words: list[str]) -> Q:
    """A filter that holds when `lookup` (e.g. "name__icontains") holds for every word."""
    condition = Q()
    for word in words:
        condition &= Q(**{lookup: word})
    return condition


def queryset_page(queryset: QuerySet, query: SearchQuery) -> SearchPage[int]:
    """The ids of the query's slice of an ordered queryset, one row more than the page to know
    whether another follows: no count, so the total only says that ("more than")."""
    ids = list(queryset.values_list("pk", flat=True)[query.offset : query.offset + query.limit + 1])
    shown = ids[: query.limit]
    return SearchPage(
        items=shown, total=query.offset + len(shown), total_is_capped=len(ids) > query.limit
    )


def with_instances(found: SearchPage[int], queryset: QuerySet[Any]) -> SearchPage[Any]:
    """The page with each id replaced by its row from `queryset` (one query), in the engine's
    order, and the same for `related`; an id whose row has gone since it was indexed is left
    out (with its score)."""
    by_id: dict[Any, Model] = queryset.in_bulk([*found.items, *found.related])
    page = found.with_items(
        [by_id[i] for i in found.items if i in by_id],
        [by_id[i] for i in found.related if i in by_id],
    )
    page.related_scores = [
        score for i, score in zip(found.related, found.related_scores, strict=True) if i in by_id
    ]
    if found.scores:
        page.scores = [
            score for i, score in zip(found.items, found.scores, strict=True) if i in by_id
        ]
    return page
