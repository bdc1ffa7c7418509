"""gunicorn's settings for the web process (the Procfile's `web` line, deploy/systemd's
wovepaper-web unit; `gunicorn -c deploy/gunicorn.conf.py wovepaper.wsgi`). The command line
still sets the address, the number of workers and the timeout."""

import gc
import os

# A statement the database takes longer than this over is cancelled (wovepaper/settings.py,
# postgres_timeouts): 25 s, so that with the 5 s connect timeout a request answers before the
# 60 s worker timeout the Procfile and the systemd unit set, and never as gunicorn's bare 500.
# Only the web sets it: migrations and the workers' batches may run longer.
os.environ.setdefault("DB_STATEMENT_TIMEOUT", "25")
# One ONNX Runtime thread for a worker's query encodings, as for the embed workers: with a
# worker per core, a pool of every core spins beside the request's own thread while a query
# is encoded ahead (wovepaper.lib.embeddings.query_vector_ahead). At 1M papers, one worker,
# first-time searches: p95 19.2 ms against 22.2, 18.1 against 19.9 (two runs of each).
os.environ.setdefault("EMBEDDING_THREADS", "1")


def post_worker_init(worker):
    # Runs in each new worker after it has loaded the site and before it accepts a request:
    # the encoder, the indexes and the templates load here, not on a reader's first request.
    from wovepaper.warmup import warm_up

    seconds = warm_up()
    settle_collector()
    # The line benchmarks/first_request.py waits for: the worker accepts from here on.
    worker.log.info("worker %s ready (warm-up %.2f s)", worker.pid, sum(seconds.values()))


def settle_collector():
    """Keep the cycle collector out of requests. With Python's thresholds (700 net allocations)
    a 1M-paper search page ran one young collection (0.3 ms) a page and a second-generation one
    (3-4 ms) every 25, in the middle of a request: a twentieth of the pages paid it. A page's
    own objects are freed by their reference counts; only cycles wait for the collector. So
    what the warm-up made is frozen out of every later collection, and the first generation
    is collected after WEB_GC_THRESHOLD net allocations (0: Python's own thresholds)."""
    threshold = int(os.environ.get("WEB_GC_THRESHOLD", "50000"))
    if threshold > 0:
        gc.collect()
        gc.freeze()
        gc.set_threshold(threshold, 20, 20)
