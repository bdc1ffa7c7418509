"""A new web worker loads what its first request needs before it accepts one
(wovepaper.warmup, from deploy/gunicorn.conf.py), and the encoder's model is exported once
per machine however many processes start together."""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import runpy
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from django.db import connection
from django.template import engines

from tests.workers import ROOT, database_url, free_port, wait_for
from wovepaper import warmup
from wovepaper.lib import embeddings
from wovepaper.lib.embeddings import MiniLMOnnxInt8Encoder, TextEncoder

pytestmark = pytest.mark.django_db


class MarkingEncoder(TextEncoder):
    """Unit vectors from a hash of the words; `prepare` leaves a file behind (WARM_UP_MARK)
    so that another process's warm-up can be seen; prepared unless told otherwise."""

    name = "test-marking"
    dimensions = 8
    prepared = True
    prepare_calls = 0

    def __init__(self, *, threads: int = 0) -> None:
        pass

    def encode(self, texts):
        rows = np.array(
            [[(hash((text, i)) % 1000) + 1 for i in range(self.dimensions)] for text in texts],
            dtype=np.float32,
        ).reshape(len(texts), self.dimensions)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True).clip(1e-9)

    def is_prepared(self) -> bool:
        return self.prepared

    def prepare(self) -> None:
        type(self).prepare_calls += 1
        if mark := os.environ.get("WARM_UP_MARK"):
            Path(mark).write_text(str(os.getpid()))
        super().prepare()


class UnexportedEncoder(MarkingEncoder):
    prepared = False


@pytest.fixture
def encoder_named(settings, monkeypatch):
    monkeypatch.setattr(embeddings, "_encoders", {})

    def use(cls: type[MarkingEncoder]) -> type[MarkingEncoder]:
        settings.EMBEDDING_ENCODER = f"{__name__}.{cls.__name__}"
        cls.prepare_calls = 0
        return cls

    return use


def _cached_template_names() -> set[str]:
    loader = engines["django"].engine.template_loaders[0]
    return set(loader.get_template_cache)


def test_warm_up_compiles_the_templates_maps_the_indexes_and_loads_the_encoder(
    encoder_named, paper_factory
):
    encoder = encoder_named(MarkingEncoder)
    paper_factory(title="Neural network models of spin glasses")
    engines["django"].engine.template_loaders[0].reset()

    seconds = warmup.warm_up()

    assert set(seconds) == {"templates", "urls", "search", "home page"}
    assert {"base.html", "wovepaper/search.html", "papers/detail.html"} <= _cached_template_names()
    assert encoder.prepare_calls == 1


def test_a_model_not_exported_yet_is_left_to_deploy_time(encoder_named, caplog):
    encoder = encoder_named(UnexportedEncoder)
    with caplog.at_level(logging.WARNING, logger="wovepaper.warmup"):
        seconds = warmup.warm_up()
    assert encoder.prepare_calls == 0
    assert "search" in seconds  # the words' side still warmed
    assert "manage.py prepare_encoder" in caplog.text


def test_a_step_that_fails_is_logged_and_the_worker_starts(encoder_named, monkeypatch, caplog):
    encoder_named(MarkingEncoder)

    def index_away():
        raise OSError("search index not built yet")

    monkeypatch.setitem(warmup.STEPS, "search", index_away)
    with caplog.at_level(logging.WARNING, logger="wovepaper.warmup"):
        seconds = warmup.warm_up()
    assert set(seconds) == {"templates", "urls", "home page"}
    assert "search skipped: OSError: search index not built yet" in caplog.text


def test_warm_up_can_be_turned_off(encoder_named, settings):
    encoder = encoder_named(MarkingEncoder)
    settings.WEB_WARM_UP = False
    assert warmup.warm_up() == {}
    assert encoder.prepare_calls == 0


def _export_model(log: str) -> None:
    # In a forked process: the parent's settings and the stand-in exporters below.
    MiniLMOnnxInt8Encoder().model_path()


def test_processes_starting_together_export_the_model_once(settings, tmp_path, monkeypatch):
    settings.EMBEDDING_MODEL_DIR = tmp_path
    log = tmp_path / "exports.log"

    # The real export takes a core for 10 s or more; what is tested here is who does it.
    def export(weights, path):
        with log.open("a") as out:
            out.write(f"export {os.getpid()}\n")
        time.sleep(0.5)
        path.write_bytes(b"onnx")

    def quantize(exported, path):
        with log.open("a") as out:
            out.write(f"quantize {os.getpid()}\n")
        path.write_bytes(b"int8")

    monkeypatch.setattr(embeddings, "_export_onnx", export)
    monkeypatch.setattr(embeddings, "_quantize_onnx", quantize)
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_export_model, args=(str(log),)) for _ in range(3)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=30)
        assert process.exitcode == 0

    lines = log.read_text().splitlines()
    assert [line.split()[0] for line in lines] == ["export", "quantize"]
    assert MiniLMOnnxInt8Encoder().is_prepared()


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="a gunicorn process shares the test database only on PostgreSQL (SQLite's is in memory)",
)
def test_gunicorn_workers_warm_up_before_they_accept_a_request(tmp_path):
    port = free_port()
    mark = tmp_path / "prepared-by"
    log_path = tmp_path / "gunicorn.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(
        DATABASE_URL=database_url(),
        EMBEDDING_ENCODER=f"{__name__}.MarkingEncoder",
        WARM_UP_MARK=str(mark),
        WOVEPAPER_DATA_DIR=str(tmp_path),
    )
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "wovepaper.wsgi"]
            + ["-b", f"127.0.0.1:{port}", "-w", "1", "--log-level", "info"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:

            def answers() -> bool:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/robots.txt", timeout=5):
                        return True
                except OSError:
                    return False

            wait_for(answers, timeout=60, what="gunicorn", on_timeout=log_path.read_text)
            # The first answer came from a worker whose encoder was already prepared.
            assert mark.exists()
            output = log_path.read_text()
            assert "warm-up done: templates" in output and "search" in output, output
            assert "skipped" not in output, output
        finally:
            server.terminate()
            server.wait(timeout=30)


def test_a_database_that_does_not_answer_ends_the_warm_up_at_once(
    encoder_named, monkeypatch, caplog
):
    encoder_named(MarkingEncoder)
    from django.db import OperationalError

    calls = []

    def database_silent():
        calls.append("search")
        raise OperationalError("connection timeout expired")

    monkeypatch.setitem(warmup.STEPS, "search", database_silent)
    monkeypatch.setitem(warmup.STEPS, "home page", lambda: calls.append("home page"))
    with caplog.at_level(logging.WARNING, logger="wovepaper.warmup"):
        seconds = warmup.warm_up()
    # Each later step would wait the connect timeout again while the worker accepts nothing.
    assert calls == ["search"]
    assert set(seconds) == {"templates", "urls"}
    assert "search and the rest skipped, the database does not answer" in caplog.text


def test_a_web_worker_keeps_the_cycle_collector_out_of_its_requests(monkeypatch):
    """deploy/gunicorn.conf.py, after the warm-up: what it made is frozen out of later
    collections and the first generation waits for WEB_GC_THRESHOLD allocations; 0 leaves
    Python's own thresholds."""
    # The config file sets environment defaults of its own: kept to this test.
    monkeypatch.setattr(os, "environ", dict(os.environ))
    config = runpy.run_path(str(ROOT / "deploy" / "gunicorn.conf.py"))
    thresholds = gc.get_threshold()
    try:
        os.environ["WEB_GC_THRESHOLD"] = "0"
        config["settle_collector"]()
        assert gc.get_threshold() == thresholds
        assert gc.get_freeze_count() == 0
        del os.environ["WEB_GC_THRESHOLD"]
        config["settle_collector"]()
        assert gc.get_threshold()[0] == 50_000
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
