"""The site served by gunicorn for the HTTP benchmarks, and wrk run against it."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"


def production_env(redis_url: str) -> dict[str, str]:
    """The environment of a production web process (settings, Redis as the cache, collected
    static files, persistent database connections), with its static files collected."""
    env = {
        "WOVEPAPER_PRODUCTION": "1",
        "SECRET_KEY": secrets.token_urlsafe(48),
        "ALLOWED_HOSTS": "127.0.0.1",
        "REDIS_URL": redis_url,
        "STATIC_ROOT": str(OUT / "static"),
        "DB_CONN_MAX_AGE": "600",
    }
    collect_static(ROOT, env)
    return env


def collect_static(root: Path, env: dict[str, str]) -> None:
    """The static files of the checkout at `root` collected into `env`'s STATIC_ROOT."""
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=root,
        env={**os.environ, **env},
        check=True,
    )


WRK_SCRIPT = """
local paths = {%s}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i %% #paths) + 1], {%s})
end
"""


class Server:
    """gunicorn serving the site on 127.0.0.1:`port` with `workers` sync workers and the
    deployment's settings (deploy/gunicorn.conf.py: each worker warms up before it accepts);
    `env` adds to (or overrides) this process's environment. Ready when its first worker
    says so in its log (`log`), or when `/robots.txt` answers. `root`: the checkout it
    serves (another's, for benchmarks/side_by_side.py)."""

    def __init__(
        self,
        port: int,
        workers: int,
        env: dict[str, str],
        headers: dict[str, str] | None = None,
        *,
        log: Path | None = None,
        root: Path = ROOT,
    ) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.headers = headers or {}
        self.log = log
        self.started = time.perf_counter()
        output = log.open("wb") if log else None
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                "deploy/gunicorn.conf.py",
                "wovepaper.wsgi",
                "-b",
                f"127.0.0.1:{port}",
                "-w",
                str(workers),
                "--log-level",
                "info" if log else "warning",
            ],
            cwd=root,
            env={**os.environ, **env},
            stdout=output,
            stderr=output,
        )
        for _ in range(600 if log else 150):
            if self.ready():
                self.ready_seconds = time.perf_counter() - self.started
                return
            time.sleep(0.05 if log else 0.2)
        self.stop()
        raise RuntimeError("gunicorn did not start")

    def ready(self) -> bool:
        if self.log:
            return b" ready (warm-up " in self.log.read_bytes()
        try:
            self.get("/robots.txt")
            return True
        except OSError:
            return False

    def get(self, path: str) -> float:
        """One request; its time in milliseconds."""
        started = time.perf_counter()
        request = urllib.request.Request(self.url + path, headers=self.headers)
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
        return (time.perf_counter() - started) * 1000

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # workers still busy with queued requests
            self.process.kill()
            self.process.wait()


@dataclass
class WrkResult:
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int  # socket errors and non-2xx/3xx answers

    def __str__(self) -> str:
        return (
            f"{self.requests_per_second:8.1f} req/s  p50 {self.p50_ms:7.1f} ms  "
            f"p99 {self.p99_ms:7.1f} ms  {self.requests:,} requests, {self.errors} errors"
        )


def wrk(
    server: Server, paths: list[str], *, seconds: int, connections: int = 32, script: Path
) -> WrkResult:
    """wrk -t2 -c`connections` -d`seconds`s cycling through `paths`, with the server's headers."""
    script.write_text(
        WRK_SCRIPT
        % (
            ", ".join(f'"{p}"' for p in paths),
            ", ".join(f'["{k}"] = "{v}"' for k, v in server.headers.items()),
        )
    )
    result = subprocess.run(
        [
            "wrk",
            "-t2",
            f"-c{connections}",
            f"-d{seconds}s",
            "--latency",
            "-s",
            str(script),
            server.url,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return parse_wrk(result.stdout)


_UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(number) * _UNIT_MS[unit]


def parse_wrk(output: str) -> WrkResult:
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)\s*$", output, re.M))
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", output))
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return WrkResult(
        requests_per_second=float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
        # No request finished in time: wrk prints no distribution.
        p50_ms=_ms(latency["50"]) if latency else float("nan"),
        p99_ms=_ms(latency["99"]) if latency else float("nan"),
        requests=requests,
        errors=errors + (int(non_2xx.group(1)) if non_2xx else 0),
    )
