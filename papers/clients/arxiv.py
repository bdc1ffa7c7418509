"""arXiv's OAI-PMH interface over httpx, with arXiv's flow control.

One `httpx.Client` per `ArxivOAIClient` (one connection, a timeout, our User-Agent). Every
request first takes a slot from a limiter shared through the Django cache (Redis in
production), so all workers together send at most one request per `ARXIV_MIN_INTERVAL` seconds,
as arXiv's terms ask. Then:

- HTTP 503/429 with `Retry-After: N` (N > 0): wait N seconds (capped by ARXIV_RETRY_AFTER_CAP)
  and retry. `Retry-After: 0` or none: exponential backoff with jitter (arXiv answers 503 with
  `Retry-After: 0` after ~180 s on overloaded days).
- Timeouts, connection errors, other 5xx, and bodies that are not well-formed XML (a cut
  response): exponential backoff with jitter, up to ARXIV_OAI_MAX_RETRIES retries.
- Other 4xx: raised at once (retrying cannot help).

Parsing is done by the pure functions in `papers.oai`; this module returns their dataclasses.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from functools import partial
from typing import TypeVar

import httpx
from django.conf import settings
from lxml import etree

from papers import oai
from wovepaper.lib.http import RateLimiter, parse_retry_after

logger = logging.getLogger(__name__)
T = TypeVar("T")


class ArxivOAIClientError(Exception):
    """The request could not be completed; the message says what was tried."""


class ArxivUnavailable(ArxivOAIClientError):
    """Transient failures went on past the retry budget."""


class MalformedResponse(ArxivOAIClientError):
    """The body stayed unreadable as XML (e.g. cut short) after every retry."""


@dataclass(slots=True)
class Wait:
    reason: str
    requested: float
    slept: float


class ArxivOAIClient:
    """Thin OAI-PMH client for arXiv. Not thread-safe: one per harvest.

    Settings (overridable per instance): ARXIV_OAI_URL, ARXIV_OAI_TIMEOUT, ARXIV_MIN_INTERVAL,
    ARXIV_OAI_MAX_RETRIES, ARXIV_BACKOFF_BASE, ARXIV_BACKOFF_CAP, ARXIV_RETRY_AFTER_CAP,
    HTTP_USER_AGENT. `transport` lets tests wrap the real HTTP transport.
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        timeout: float | None = None,
        min_interval: float | None = None,
        max_retries: int | None = None,
        backoff_base: float | None = None,
        backoff_cap: float | None = None,
        retry_after_cap: float | None = None,
        transport: httpx.BaseTransport | None = None,
    ):
        self.base_url = base_url or settings.ARXIV_OAI_URL
        timeout = settings.ARXIV_OAI_TIMEOUT if timeout is None else timeout
        self.max_retries = settings.ARXIV_OAI_MAX_RETRIES if max_retries is None else max_retries
        self.backoff_base = settings.ARXIV_BACKOFF_BASE if backoff_base is None else backoff_base
        self.backoff_cap = settings.ARXIV_BACKOFF_CAP if backoff_cap is None else backoff_cap
        self.retry_after_cap = (
            settings.ARXIV_RETRY_AFTER_CAP if retry_after_cap is None else retry_after_cap
        )
        interval = settings.ARXIV_MIN_INTERVAL if min_interval is None else min_interval
        # One limiter key for every client of arXiv: the terms count all our machines together.
        self.limiter = RateLimiter("arxiv", 1.0 / interval if interval > 0 else 0)
        self.http = httpx.Client(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 30.0)),
            headers={"User-Agent": settings.HTTP_USER_AGENT},
            transport=transport,
            # The legacy endpoint redirects; a redirect is not a new request for the limiter.
            follow_redirects=True,
        )
        self.waits: list[Wait] = []
        self.requests_sent = 0

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> ArxivOAIClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- flow control --------------------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        delay = min(self.backoff_cap, self.backoff_base * (2**attempt))
        # Jitter spreads workers that failed together so they do not retry together.
        return random.uniform(delay / 2, delay)

    def _wait(self, seconds: float, reason: str, requested: float | None = None) -> None:
        logger.warning("arXiv OAI-PMH: waiting %.1fs before retrying (%s)", seconds, reason)
        started = time.monotonic()
        time.sleep(max(0.0, seconds))
        self.waits.append(
            Wait(
                reason=reason,
                requested=seconds if requested is None else requested,
                slept=time.monotonic() - started,
            )
        )

    def _get(self, params: dict[str, str]) -> bytes:
        """GET the endpoint with flow control; return the body of the first 200 answer."""
        last_problem = ""
        for attempt in range(self.max_retries + 1):
            self.limiter.acquire()
            self.requests_sent += 1
            delay: float | None = None
            requested: float | None = None
            try:
                response = self.http.get(self.base_url, params=params)
            except httpx.TransportError as exc:
                # Timeouts, refused/reset connections, bodies shorter than Content-Length.
                last_problem = f"{type(exc).__name__}: {exc}"
            else:
                status = response.status_code
                if status == 200:
                    return response.content
                last_problem = f"HTTP {status}"
                if status in (429, 503):
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
                    # 0 or absent means "back off" (arXiv's overloaded-day answer), not "now".
                    if retry_after:
                        requested = retry_after
                        last_problem += f" Retry-After {retry_after:g}s"
                        delay = min(retry_after, self.retry_after_cap)
                elif status < 500:
                    raise ArxivOAIClientError(
                        f"HTTP {status} from {response.request.url}: {response.text[:300]!r}"
                    )
            if attempt == self.max_retries:
                break
            if delay is None:
                delay = self._backoff(attempt)
            self._wait(delay, last_problem, requested)
        raise ArxivUnavailable(
            f"{self.base_url} {params.get('verb')}: gave up after {self.max_retries + 1} "
            f"attempts; last: {last_problem}"
        )

    def fetch(self, params: dict[str, str], parse: Callable[[bytes], T]) -> T:
        """GET and parse; a body that is not well-formed XML is fetched again with backoff."""
        problem = ""
        for attempt in range(self.max_retries + 1):
            body = self._get(params)
            try:
                return parse(body)
            except etree.XMLSyntaxError as exc:
                problem = f"not well-formed XML ({len(body)} bytes): {exc}"
                if attempt < self.max_retries:
                    self._wait(self._backoff(attempt), problem)
        raise MalformedResponse(
            f"{self.base_url} {params.get('verb')} {_describe(params)}: response still not "
            f"well-formed after {self.max_retries + 1} attempts; {problem}"
        )

    # -- verbs ---------------------------------------------------------------------------------

    def identify(self) -> oai.Identify:
        return self.fetch({"verb": "Identify"}, oai.parse_identify)

    def list_sets(self) -> list[oai.OAISet]:
        sets: list[oai.OAISet] = []
        params = {"verb": "ListSets"}
        while True:
            page, token = self.fetch(params, oai.parse_list_sets)
            sets.extend(page)
            if token is None or token.is_last:
                return sets
            params = {"verb": "ListSets", "resumptionToken": token.value}

    def get_record(self, arxiv_id: str, *, metadata_prefix: str = "arXivRaw") -> oai.ListPage:
        params = {
            "verb": "GetRecord",
            "identifier": f"oai:arXiv.org:{arxiv_id}",
            "metadataPrefix": metadata_prefix,
        }
        return self.fetch(params, partial(oai.parse_get_record, metadata_prefix=metadata_prefix))

    def list_records_page(
        self,
        *,
        metadata_prefix: str = "arXivRaw",
        set_spec: str = "",
        from_date: date | None = None,
        until_date: date | None = None,
        resumption_token: str = "",
    ) -> oai.ListPage:
        """One ListRecords page: the window's first, or the one a resumption token points to."""
        params = _list_params(
            "ListRecords", metadata_prefix, set_spec, from_date, until_date, resumption_token
        )
        return self.fetch(params, partial(oai.parse_list_records, metadata_prefix=metadata_prefix))

    def list_records(self, **window) -> Iterator[oai.ListPage]:
        """Every page of a window, following resumption tokens to the end (no checkpoints)."""
        yield from _follow_tokens(self.list_records_page, window)

    def list_identifiers_page(
        self,
        *,
        metadata_prefix: str = "arXivRaw",
        set_spec: str = "",
        from_date: date | None = None,
        until_date: date | None = None,
        resumption_token: str = "",
    ) -> oai.HeaderPage:
        params = _list_params(
            "ListIdentifiers", metadata_prefix, set_spec, from_date, until_date, resumption_token
        )
        return self.fetch(params, oai.parse_list_identifiers)

    def list_identifiers(self, **window) -> Iterator[oai.HeaderPage]:
        yield from _follow_tokens(self.list_identifiers_page, window)


P = TypeVar("P", oai.ListPage, oai.HeaderPage)


def _follow_tokens(list_page: Callable[..., P], window: dict) -> Iterator[P]:
    # The window goes along with every token: _list_params sends only the token, and the
    # metadata prefix still tells the parser which format the pages are in.
    page = list_page(**window)
    yield page
    while page.token is not None and not page.token.is_last:
        page = list_page(**{**window, "resumption_token": page.token.value})
        yield page


def _list_params(
    verb: str,
    metadata_prefix: str,
    set_spec: str,
    from_date: date | None,
    until_date: date | None,
    resumption_token: str,
) -> dict[str, str]:
    # With a token, OAI-PMH allows only verb + resumptionToken (arXiv answers badArgument
    # otherwise). The token goes as an ordinary parameter: httpx encodes it; never unescape it.
    if resumption_token:
        return {"verb": verb, "resumptionToken": resumption_token}
    params = {"verb": verb, "metadataPrefix": metadata_prefix}
    if set_spec:
        params["set"] = set_spec
    if from_date:
        params["from"] = from_date.isoformat()
    if until_date:
        params["until"] = until_date.isoformat()
    return params


def _describe(params: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items() if k != "verb")
