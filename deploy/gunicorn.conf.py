"""gunicorn's settings for the web process (the Procfile's `web` line, deploy/systemd's
wovepaper-web unit; `gunicorn -c deploy/gunicorn.conf.py wovepaper.wsgi`). The command line
still sets the address, the number of workers and the timeout."""


def post_worker_init(worker):
    # Runs in each new worker after it has loaded the site and before it accepts a request:
    # the encoder, the indexes and the templates load here, not on a reader's first request.
    from wovepaper.warmup import warm_up

    seconds = warm_up()
    # The line benchmarks/first_request.py waits for: the worker accepts from here on.
    worker.log.info("worker %s ready (warm-up %.2f s)", worker.pid, sum(seconds.values()))
