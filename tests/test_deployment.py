"""The shipped deployment examples agree with the code: every setting the code reads is in the
table in docs/configuration.md, the Procfile's workers serve every queue tasks are routed to,
and a worker started from its Procfile line answers the health check's `celery inspect ping`."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import uuid
from pathlib import Path

from django.conf import settings

from tests.workers import REDIS_BROKER, wait_for

ROOT = Path(__file__).resolve().parent.parent
PROCFILE = ROOT / "Procfile"


def procfile() -> dict[str, str]:
    lines = PROCFILE.read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line and not line.startswith("#"))


def test_every_setting_the_code_reads_is_in_the_configuration_table():
    code = (ROOT / "wovepaper" / "settings.py").read_text()
    read = set(re.findall(r'\benv(?:_bool|_int|_list)?\(\s*"([A-Z][A-Z0-9_]*)"', code))
    table = (ROOT / "docs" / "configuration.md").read_text()
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]*)(?:=[^`]*)?`", table))
    assert len(read) > 50
    assert sorted(read - documented) == []


def test_the_procfile_runs_a_worker_for_every_routed_queue_and_one_beat():
    processes = procfile()
    served = {}
    for command in processes.values():
        if " worker " in command:
            queue = re.search(r"-Q \$\{CELERY_QUEUE_PREFIX\}(\S+)", command).group(1)
            served[queue] = re.search(r"-n (\S+)@%h", command).group(1)
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    routed.add(settings.CELERY_TASK_DEFAULT_QUEUE)
    assert settings.CELERY_QUEUE_PREFIX == ""
    assert routed <= set(served), routed - set(served)
    assert len(set(served.values())) == len(served)  # one -n name per worker
    assert "--concurrency 1 --pool solo" in processes["harvest"]
    beats = [c for c in processes.values() if " beat" in c]
    assert len(beats) == 1 and "--schedule var/celerybeat-schedule" in beats[0]
    ignored = (ROOT / ".gitignore").read_text().split()
    assert "/var/" in ignored and "celerybeat-schedule*" in ignored
    unit = (ROOT / "deploy" / "systemd" / "wovepaper-worker@.service").read_text()
    assert "-Q ${CELERY_QUEUE_PREFIX}%i -n %i@%H" in unit


def test_every_procfile_line_is_started_again_and_every_worker_runs_without_gossip():
    processes = procfile()
    for name, command in processes.items():
        assert re.match(r"(\w+=\S+ )*deploy/keep-running ", command), name
    workers = [c for c in processes.values() if " worker " in c]
    unit = (ROOT / "deploy" / "systemd" / "wovepaper-worker@.service").read_text()
    assert len(workers) == 6 and all(" --without-gossip " in c for c in workers)
    assert " --without-gossip " in unit and "Restart=always" in unit
    assert os.access(ROOT / "deploy" / "keep-running", os.X_OK)


def celery_ping(name: str, *, timeout: int, env: dict[str, str]) -> subprocess.CompletedProcess:
    """What deploy/healthcheck.sh ran for each worker before wovepaper.worker_health."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "wovepaper",
            "inspect",
            "ping",
            "--timeout",
            str(timeout),
            "-d",
            name,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_worker_started_from_its_procfile_line_answers_celery_inspect_ping(tmp_path):
    prefix = f"ops-ping-{uuid.uuid4().hex[:8]}-"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CELERY_")}
    env.update(CELERY_BROKER_URL=REDIS_BROKER, CELERY_QUEUE_PREFIX=prefix, DEFAULT_CONCURRENCY="1")
    env.pop("DATABASE_URL", None)
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        worker = subprocess.Popen(
            ["bash", "-c", f"exec {procfile()['default']}"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for(
                lambda: b"ready." in log_path.read_bytes(),
                timeout=60,
                what="the worker to start",
                on_timeout=log_path.read_text,
            )
            name = f"default@{socket.gethostname()}"
            # As a health check would, ask again: a worker busy starting up (or a loaded
            # machine) may miss one ping's window.
            pings = []
            wait_for(
                lambda: (
                    pings.append(celery_ping(name, timeout=10, env=env))
                    or pings[-1].returncode == 0
                ),
                timeout=90,
                what=f"{name} to answer celery inspect ping",
                on_timeout=lambda: pings[-1].stdout + pings[-1].stderr,
            )
            ping = pings[-1]
            assert f"{name}: OK" in ping.stdout and "pong" in ping.stdout
            absent = celery_ping(f"nobody-{prefix}@nowhere", timeout=2, env=env)
            assert absent.returncode != 0  # what makes the health check fail
        finally:
            worker.terminate()
            worker.wait(timeout=60)
    assert f"{prefix}default" in log_path.read_text()  # it consumed the prefixed queue


def test_the_env_example_can_be_sourced_by_a_shell_and_reads_as_the_code_expects():
    import json

    script = (
        "set -a; . deploy/wovepaper.env.example; "
        'printf "%s\\n%s\\n" "$CELERY_BROKER_TRANSPORT_OPTIONS" "$SEARCH_ENGINE"'
    )
    done = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""
    options, engine = done.stdout.splitlines()
    assert json.loads(options) == {"visibility_timeout": 3600}
    assert engine == "tantivy"


def test_the_web_units_install_line_enables_every_worker_the_healthcheck_pings():
    healthcheck = (ROOT / "deploy" / "healthcheck.sh").read_text()
    pinged = set(re.findall(r'"(\w+)@\$host"', healthcheck))
    unit = (ROOT / "deploy" / "systemd" / "wovepaper-web.service").read_text()
    enabled = set(re.findall(r"wovepaper-worker@(\w+)", unit))
    assert pinged and pinged <= enabled, pinged - enabled


def test_the_worker_health_command_runs_without_a_warning_and_fails_for_an_unknown_worker(
    tmp_path,
):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CELERY_")}
    env.update(WORKER_HEALTH_DIR=str(tmp_path), PYTHONWARNINGS="default")
    done = subprocess.run(
        [sys.executable, "-m", "wovepaper.worker_health", "nobody@nowhere"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    # runpy's "found in sys.modules … prior to execution" was printed on every run before.
    assert "Warning" not in done.stderr, done.stderr
    assert done.stderr.startswith("nobody@nowhere: no health file"), done.stderr
