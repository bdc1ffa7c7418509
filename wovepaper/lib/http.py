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

from wovepaper.lib.cache import coordination_cache

logger = logging.getLogger(__name__)
T = TypeVar("T")

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
    """How one service's transient failures are retried (see ServiceClient.fetch)."""

    attempts: int
    backoff: float  # seconds before the first retry; doubles each time, with jitter
    backoff_max: float
    retry_after_max: float  # the longest Retry-After waited for
    # Past retry_after_max: give up (an API asking for an hour means its quota is spent), or
    # wait retry_after_max and try again (arXiv: a misbehaving proxy must not stall a harvest).
    shorten_long_retry_after: bool = False
    # `Retry-After: 0`: retry at once, or back off (arXiv answers 503 `Retry-After: 0` when it
    # is overloaded, and means "later").
    zero_retry_after_backs_off: bool = False
    jitter: tuple[float, float] = (0.75, 1.25)  # the backoff is multiplied by a factor in here

    @classmethod
    def from_settings(cls) -> RetryPolicy:
        return cls(
            attempts=settings.HTTP_RETRY_ATTEMPTS,
            backoff=settings.HTTP_RETRY_BACKOFF,
            backoff_max=settings.HTTP_RETRY_BACKOFF_MAX,
            retry_after_max=settings.HTTP_RETRY_AFTER_MAX,
        )

    def backoff_for(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        delay = min(self.backoff_max, self.backoff * 2 ** (attempt - 1))
        # Jitter spreads workers that failed together so they do not retry together.
        return delay * random.uniform(*self.jitter)


class UnusableAnswer(Exception):
    """The service answered, but with something that cannot be used as it is (a body cut
    short, a list that ends too early): fetched again like a failed request."""


@dataclass(slots=True)
class Wait:
    reason: str
    requested: float
    slept: float


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
            coordination_cache().add(self.key, current, timeout=3600)
            try:
                slot = coordination_cache().incr(self.key)
            except ValueError:  # the key expired between add and incr
                continue
            if slot <= current:
                # The counter fell behind the clock while the service was idle: catch it up,
                # so the next slot starts after now and every request starts at its slot.
                # (Two processes doing this at once may share one slot; that is all it costs.)
                coordination_cache().set(self.key, current, timeout=3600)
                continue
            wait = slot * interval - now
            if wait > 0:
                time.sleep(wait)
            return


def only_set(values: dict[str, str]) -> dict[str, str]:
    """The headers or parameters whose value is set: a key or address left empty in the
    settings is not sent at all."""
    return {name: value for name, value in values.items() if value}


class ServiceClient:
    """One external service: base URL, headers, timeout, rate limit and retry policy.

    `waits` and `requests_sent` tell what the flow control did, for logs and tests.
    """

    service = "service"

    def __init__(
        self,
        *,
        base_url: str,
        rate: float,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
        timeout: float | None = None,
        connect_timeout: float | None = None,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.limiter = RateLimiter(self.service, rate)
        self.retry = retry or RetryPolicy.from_settings()
        self.default_params = params or {}
        timeout = timeout if timeout is not None else settings.HTTP_TIMEOUT
        connect_timeout = (
            connect_timeout if connect_timeout is not None else settings.HTTP_CONNECT_TIMEOUT
        )
        self.http = httpx.Client(
            headers={"User-Agent": settings.HTTP_USER_AGENT, **(headers or {})},
            timeout=httpx.Timeout(timeout, connect=min(timeout, connect_timeout)),
            transport=transport,
            follow_redirects=True,  # OpenAlex answers 301 for merged ids; arXiv's legacy URL too
        )
        self.waits: list[Wait] = []
        self.requests_sent = 0

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
        """Send one request, retrying transient failures; return a response in `ok_statuses`."""
        return self.fetch(method, path, _as_is, params=params, json=json, ok_statuses=ok_statuses)

    def fetch(
        self,
        method: str,
        path: str,
        parse: Callable[[httpx.Response], T],
        *,
        params: dict | None = None,
        json: object = None,
        ok_statuses: frozenset[int] = frozenset({200}),
    ) -> T:
        """`parse` the first usable answer, retrying transient failures by the retry policy.

        Retried, with backoff (or as long as `Retry-After` asks): timeouts, connection
        errors, 429 and 5xx, and answers `parse` rejects with UnusableAnswer. Raises
        ServiceError (see `refused` and `gave_up`) when the service stays unreachable, keeps
        failing, asks to wait longer than the policy allows, or answers with another status.
        """
        url = f"{self.base_url}/{path.lstrip('/')}" if path else self.base_url
        merged = {**self.default_params, **(params or {})}
        policy = self.retry
        problem = "no attempt made"
        unusable: UnusableAnswer | None = None
        for attempt in range(1, policy.attempts + 1):
            self.limiter.acquire()
            self.requests_sent += 1
            wait: float | None = None
            requested: float | None = None
            unusable = None
            try:
                response = self.http.request(method, url, params=merged or None, json=json)
            except httpx.TimeoutException as exc:
                problem = f"timed out ({type(exc).__name__})"
            except httpx.TransportError as exc:
                # Refused or reset connections, bodies shorter than their Content-Length.
                problem = f"unreachable ({type(exc).__name__}: {exc})".replace(": )", ")")
            else:
                status = response.status_code
                if status in ok_statuses:
                    try:
                        return parse(response)
                    except UnusableAnswer as exc:
                        unusable, problem = exc, str(exc)
                elif status not in RETRY_STATUSES:
                    raise self.refused(response, method, path)
                else:
                    problem = f"HTTP {status}"
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
                    if retry_after or (retry_after == 0 and not policy.zero_retry_after_backs_off):
                        problem += f" Retry-After {retry_after:g}s" if retry_after else ""
                        requested = wait = retry_after
                        if retry_after > policy.retry_after_max:
                            if not policy.shorten_long_retry_after:
                                raise ServiceError(
                                    self.service,
                                    f"HTTP {status}, asked to retry after {retry_after:.0f} s",
                                    status=status,
                                )
                            wait = policy.retry_after_max
            if attempt == policy.attempts:
                break
            self._wait(policy.backoff_for(attempt) if wait is None else wait, problem, requested)
        raise self.gave_up(method, path, merged, problem, unusable)

    def _wait(self, seconds: float, reason: str, requested: float | None) -> None:
        logger.warning("%s: %s; retrying in %.2f s", self.service, reason, seconds)
        started = time.monotonic()
        time.sleep(max(0.0, seconds))
        self.waits.append(
            Wait(
                reason=reason,
                requested=seconds if requested is None else requested,
                slept=time.monotonic() - started,
            )
        )

    def refused(self, response: httpx.Response, method: str, path: str) -> ServiceError:
        """The error for an answer retrying cannot help (4xx other than 429)."""
        return ServiceError(
            self.service,
            f"HTTP {response.status_code} for {method} {path}: {response.text[:200]}",
            status=response.status_code,
        )

    def gave_up(
        self,
        method: str,
        path: str,
        params: dict,
        problem: str,
        unusable: UnusableAnswer | None,
    ) -> ServiceError:
        """The error once every attempt failed; `unusable` if the last one was an answer."""
        return ServiceError(self.service, f"{problem} after {self.retry.attempts} attempts")


def _as_is(response: httpx.Response) -> httpx.Response:
    return response


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
