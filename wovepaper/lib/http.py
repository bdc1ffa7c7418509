"""What every external API client shares: one httpx client per service with our User-Agent, a
rate limit per service shared by all workers through the cache (Redis in production), and
retries with backoff on 429, 5xx and timeouts that honour `Retry-After`.

The clients in `<app>/clients/` build on `ServiceClient`; nothing else touches the network.
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx
from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class ServiceError(Exception):
    """A service could not give an answer: unreachable, timing out, or refusing after retries.

    Callers leave their data as it was and report `str(error)`.
    """

    def __init__(self, service: str, message: str, *, status: int | None = None):
        super().__init__(f"{service}: {message}")
        self.service = service
        self.status = status


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int
    backoff: float  # seconds before the first retry; doubles each time, with jitter
    backoff_max: float
    retry_after_max: float  # the longest Retry-After we wait for; longer is an error

    @classmethod
    def from_settings(cls) -> RetryPolicy:
        return cls(
            attempts=settings.HTTP_RETRY_ATTEMPTS,
            backoff=settings.HTTP_RETRY_BACKOFF,
            backoff_max=settings.HTTP_RETRY_BACKOFF_MAX,
            retry_after_max=settings.HTTP_RETRY_AFTER_MAX,
        )


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class RateLimiter:
    """At most `rate` requests per second for one service, spaced evenly across every process.

    Time is cut into slots of 1/rate seconds; each request takes the next free slot from a
    counter in the cache (`incr` is atomic on Redis, and within one process on the local-memory
    cache) and sleeps until its slot begins. Unlike a per-second window this never lets two
    requests through back to back at a window boundary, which a 1 request/s limit would punish.
    """

    def __init__(self, service: str, rate: float):
        self.service = service
        self.key = "ratelimit:" + "".join(ch if ch.isalnum() else "-" for ch in service.lower())
        self.rate = rate

    def acquire(self) -> None:
        if self.rate <= 0:
            return
        interval = 1.0 / self.rate
        for _ in range(100):
            now = time.time()
            current = int(now / interval)
            cache.add(self.key, current, timeout=3600)
            try:
                slot = cache.incr(self.key)
            except ValueError:  # the key expired between add and incr
                continue
            if slot <= current:
                # The counter fell behind the clock while the service was idle: catch it up,
                # so the next slot starts after now and every request starts at its slot.
                # (Two processes doing this at once may share one slot; that is all it costs.)
                cache.set(self.key, current, timeout=3600)
                continue
            wait = slot * interval - now
            if wait > 0:
                time.sleep(wait)
            return


class ServiceClient:
    """One external service: base URL, headers, timeout, rate limit and retry policy."""

    service = "service"

    def __init__(
        self,
        *,
        base_url: str,
        rate: float,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.limiter = RateLimiter(self.service, rate)
        self.retry = retry or RetryPolicy.from_settings()
        self.default_params = params or {}
        self.http = httpx.Client(
            headers={"User-Agent": settings.HTTP_USER_AGENT, **(headers or {})},
            timeout=httpx.Timeout(
                timeout if timeout is not None else settings.HTTP_TIMEOUT,
                connect=min(timeout or settings.HTTP_TIMEOUT, settings.HTTP_CONNECT_TIMEOUT),
            ),
            transport=transport,
            follow_redirects=True,  # OpenAlex answers 301 for merged ids
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: dict | None = None,
        json: object = None,
        ok_statuses: frozenset[int] = frozenset({200}),
    ) -> httpx.Response:
        """Send one request, retrying transient failures; return a response in `ok_statuses`.

        Raises ServiceError when the service stays unreachable, keeps failing, asks to wait
        longer than HTTP_RETRY_AFTER_MAX, or answers with an unexpected status.
        """
        url = f"{self.base_url}/{path.lstrip('/')}"
        merged = {**self.default_params, **(params or {})}
        last_problem = "no attempt made"
        for attempt in range(1, self.retry.attempts + 1):
            self.limiter.acquire()
            wait: float | None = None
            try:
                response = self.http.request(method, url, params=merged or None, json=json)
            except httpx.TimeoutException as exc:
                last_problem = f"timed out ({type(exc).__name__})"
            except httpx.TransportError as exc:
                last_problem = f"unreachable ({exc or type(exc).__name__})"
            else:
                if response.status_code in ok_statuses:
                    return response
                if response.status_code not in RETRY_STATUSES:
                    raise ServiceError(
                        self.service,
                        f"HTTP {response.status_code} for {method} {path}: {response.text[:200]}",
                        status=response.status_code,
                    )
                last_problem = f"HTTP {response.status_code}"
                wait = parse_retry_after(response.headers.get("Retry-After"))
                if wait is not None and wait > self.retry.retry_after_max:
                    raise ServiceError(
                        self.service,
                        f"HTTP {response.status_code}, asked to retry after {wait:.0f} s",
                        status=response.status_code,
                    )
            if attempt == self.retry.attempts:
                break
            if wait is None:
                backoff = min(self.retry.backoff_max, self.retry.backoff * 2 ** (attempt - 1))
                wait = backoff * (0.75 + random.random() / 2)
            logger.info(
                "%s: %s on %s %s; retry %d in %.2f s",
                self.service,
                last_problem,
                method,
                path,
                attempt,
                wait,
            )
            time.sleep(wait)
        raise ServiceError(self.service, f"{last_problem} after {self.retry.attempts} attempts")


def service_probe(url: str, *, timeout: float) -> str | None:
    """Whether a service answers at all, within `timeout` seconds: None if it does, else why not.

    Any HTTP answer counts as reachable. Used before long runs so that an unreachable service is
    reported at once instead of after every retry of every batch.
    """
    try:
        httpx.head(
            url,
            timeout=timeout,
            follow_redirects=False,
            headers={"User-Agent": settings.HTTP_USER_AGENT},
        )
    except httpx.TimeoutException:
        return f"no answer within {timeout:g} s"
    except httpx.TransportError as exc:
        return str(exc) or type(exc).__name__
    return None


T = TypeVar("T")


def parsed_answer(
    service: str, response: httpx.Response, parse: Callable[[Any], T], what: str
) -> T:
    """`parse(response.json())`: what a client of `service` makes of a successful answer.

    A body that is not JSON, or that `parse` rejects with ValueError, is the service's fault,
    not ours: it becomes a ServiceError ("unexpected {what}: ...") like any other failed answer.
    """
    try:
        return parse(response.json())
    except ValueError as exc:
        raise ServiceError(service, f"unexpected {what}: {exc}") from exc
