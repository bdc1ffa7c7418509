"""A search asked again reuses its query's vector: from the process's own copies, else from the
shared cache another process filled; exactly the vector the encoder gives. One asked for ahead
is encoded once, in another thread."""

from __future__ import annotations

import threading

import numpy as np
from django.core.cache import cache

from wovepaper.lib import embeddings
from wovepaper.lib.embeddings import (
    TextEncoder,
    forget_query_vectors,
    query_vector,
    query_vector_ahead,
)


class CountingEncoder(TextEncoder):
    dimensions = 4

    def __init__(self, name: str) -> None:
        self.name = name
        self.texts: list[str] = []

    def encode(self, texts):
        self.texts += texts
        rows = np.array([[len(t), t.count("a") + 1, 1.0, hash(self.name) % 7] for t in texts])
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_words_asked_again_run_no_model():
    encoder = CountingEncoder("model-a")
    first = query_vector(encoder, "graph neural networks")
    again = query_vector(encoder, "graph neural networks")
    assert encoder.texts == ["graph neural networks"]
    assert np.array_equal(first, again)
    assert np.array_equal(first, encoder.encode(["graph neural networks"])[0])


def test_another_process_finds_it_in_the_shared_cache():
    query_vector(CountingEncoder("model-a"), "dark matter halos")
    forget_query_vectors()  # as a process that never asked it
    other = CountingEncoder("model-a")
    vector = query_vector(other, "dark matter halos")
    assert other.texts == []
    assert vector.dtype == np.float32 and vector.shape == (4,)


def test_each_model_keeps_its_own_vectors():
    query_vector(CountingEncoder("model-a"), "dark matter halos")
    b = CountingEncoder("model-b")
    query_vector(b, "dark matter halos")
    assert b.texts == ["dark matter halos"]


def test_the_process_keeps_a_bounded_number(settings):
    settings.QUERY_VECTORS_KEPT = 3
    encoder = CountingEncoder("model-a")
    for text in ["one", "two", "three", "four"]:
        query_vector(encoder, text)
    assert len(embeddings._query_vectors) == 3
    cache.clear()
    query_vector(encoder, "one")  # the oldest went first
    assert encoder.texts[-1] == "one" and len(encoder.texts) == 5


def test_with_nothing_kept_every_search_embeds_its_words(settings):
    settings.QUERY_VECTORS_KEPT = 0
    settings.QUERY_VECTOR_CACHE_SECONDS = 0
    encoder = CountingEncoder("model-a")
    first = query_vector(encoder, "dark matter halos")
    again = query_vector(encoder, "dark matter halos")
    assert encoder.texts == ["dark matter halos"] * 2 and np.array_equal(first, again)
    assert len(embeddings._query_vectors) == 0


class WaitingEncoder(CountingEncoder):
    """Encodes only once the test lets it, noting the thread it ran in."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.started = threading.Event()
        self.release = threading.Event()
        self.threads: list[str] = []

    def encode(self, texts):
        self.threads.append(threading.current_thread().name)
        self.started.set()
        assert self.release.wait(10)
        return super().encode(texts)


def test_a_vector_asked_ahead_is_encoded_once_in_another_thread():
    encoder = WaitingEncoder("model-a")
    query_vector_ahead(encoder, "dark matter halos")
    assert encoder.started.wait(10)
    # The search asks for it while it is still being encoded: it waits for that encoding.
    threading.Timer(0.2, encoder.release.set).start()
    vector = query_vector(encoder, "dark matter halos")
    assert encoder.texts == ["dark matter halos"]
    assert encoder.threads[0].startswith("query-vector")
    assert np.array_equal(vector, CountingEncoder("model-a").encode(["dark matter halos"])[0])
    query_vector_ahead(encoder, "dark matter halos")  # kept: nothing more to do
    assert encoder.texts == ["dark matter halos"] and not embeddings._query_vectors_pending


def test_a_vector_asked_ahead_is_read_once_even_where_none_is_kept(settings):
    settings.QUERY_VECTORS_KEPT = 0
    settings.QUERY_VECTOR_CACHE_SECONDS = 0
    encoder = CountingEncoder("model-a")
    query_vector_ahead(encoder, "dark matter halos")
    query_vector(encoder, "dark matter halos")
    assert encoder.texts == ["dark matter halos"]
    query_vector(encoder, "dark matter halos")  # asked again, with nothing kept: encoded again
    assert encoder.texts == ["dark matter halos"] * 2
