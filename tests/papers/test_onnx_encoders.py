"""The ONNX Runtime encoders: the bundled weights exported on first use (offline, into
EMBEDDING_MODEL_DIR), float32 giving torch's vectors and int8 close to them under a name of
its own, behind the same TextEncoder interface."""

from __future__ import annotations

import numpy as np
import pytest

from wovepaper.lib import embeddings
from wovepaper.lib.embeddings import MiniLMEncoder, MiniLMOnnxEncoder, MiniLMOnnxInt8Encoder

TEXTS = [
    "Quantum error correction with surface codes",
    "Topological codes for fault-tolerant quantum computation",
    "Dark matter halo profiles in dwarf galaxies",
    # Longer than the model reads (256 word pieces): cut the same way by both runtimes.
    "Spin glasses and their replica symmetry breaking. " * 60,
    "",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("models")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embeddings.settings, "EMBEDDING_MODEL_DIR", directory, raising=False)
        patch.setattr(embeddings, "_models", {})  # a fresh export, not another test's session
        yield directory


def test_float32_onnx_is_torch_to_within_rounding_and_shares_its_name(model_dir):
    onnx = MiniLMOnnxEncoder(threads=1, batch_size=2)  # several batches, shorter ones first
    vectors = onnx.encode(TEXTS)
    assert (model_dir / "all-MiniLM-L6-v2-0.1.0.onnx").exists()
    reference = MiniLMEncoder(threads=1).encode(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert (vectors * reference).sum(axis=1).min() > 0.9999
    assert onnx.name == MiniLMEncoder.name and onnx.dimensions == 384
    assert onnx.encode([]).shape == (0, 384)


def test_int8_is_close_to_torch_under_a_name_of_its_own(model_dir):
    int8 = MiniLMOnnxInt8Encoder(threads=1)
    vectors = int8.encode(TEXTS[:3])
    assert (model_dir / "all-MiniLM-L6-v2-0.1.0.int8.onnx").exists()
    reference = MiniLMEncoder(threads=1).encode(TEXTS[:3])
    assert (vectors * reference).sum(axis=1).min() > 0.98
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.3
    # Vectors that differ this much from float32's are another space: a switch re-embeds.
    assert int8.name != MiniLMEncoder.name
