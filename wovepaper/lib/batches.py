"""Batches of a sequence, for writes and `IN (...)` queries of bounded size."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TypeVar

T = TypeVar("T")


def chunked(values: Iterable[T], size: int) -> Iterator[list[T]]:
    """Lists of at most `size` items, in order; any iterable, read once."""
    iterator = iter(values)
    while part := list(islice(iterator, size)):
        yield part
