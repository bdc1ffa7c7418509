"""arXiv's OAI-PMH interface, on the shared client base with arXiv's retry policy.

Every request first takes a slot from a limiter shared through the Django cache (Redis in
production), so all workers together send at most one request per `ARXIV_MIN_INTERVAL` seconds,
as arXiv's terms ask. Then, by `ARXIV_RETRY_POLICY` (wovepaper.lib.http.ServiceClient.fetch):

- HTTP 503/429 with `Retry-After: N` (N > 0): wait N seconds (shortened to
  ARXIV_RETRY_AFTER_CAP) and retry. `Retry-After: 0` or none: exponential backoff with jitter
  (arXiv answers 503 with `Retry-After: 0` after ~180 s on overloaded days).
- Timeouts, connection errors, other 5xx, bodies that are not well-formed XML (a cut response)
  and list pages that cannot continue their list (no resumptionToken in the answer to one, a
  list ending short of the size it announced): exponential backoff with jitter, up to
  ARXIV_OAI_MAX_RETRIES retries.
- Other 4xx: raised at once (retrying cannot help).

Parsing is done by the pure functions in `papers.harvest.oai`; this module returns their
dataclasses.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import date
from functools import partial
from typing import TypeVar

import httpx
from django.conf import settings
from lxml import etree

from wovepaper.lib.http import RetryPolicy, ServiceClient, ServiceError, UnusableAnswer

from . import oai

logger = logging.getLogger(__name__)
T = TypeVar("T")


class ArxivOAIClientError(ServiceError):
    """The request could not be completed; the message says what was tried."""

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__("arXiv OAI-PMH", message, status=status)


class ArxivUnavailable(ArxivOAIClientError):
    """Transient failures went on past the retry budget."""


class MalformedResponse(ArxivOAIClientError):
    """The body stayed unreadable as XML (e.g. cut short) after every retry."""


class IncompleteList(ArxivOAIClientError):
    """A list page could not continue its list (see papers.harvest.oai.list_page_problem) after
    every retry: taking it would end the harvest early and lose the rest of the list."""


class _NotWellFormed(UnusableAnswer):
    pass


class _CannotContinue(UnusableAnswer):
    pass


def arxiv_retry_policy() -> RetryPolicy:
    return RetryPolicy(
        attempts=settings.ARXIV_OAI_MAX_RETRIES + 1,
        backoff=settings.ARXIV_BACKOFF_BASE,
        backoff_max=settings.ARXIV_BACKOFF_CAP,
        retry_after_max=settings.ARXIV_RETRY_AFTER_CAP,
        shorten_long_retry_after=True,
        zero_retry_after_backs_off=True,
        jitter=(0.5, 1.0),
    )


class ArxivOAIClient(ServiceClient):
    """Thin OAI-PMH client for arXiv. Not thread-safe: one per harvest.

    Settings (overridable per instance): ARXIV_OAI_URL, ARXIV_OAI_TIMEOUT, ARXIV_MIN_INTERVAL,
    ARXIV_OAI_MAX_RETRIES, ARXIV_BACKOFF_BASE, ARXIV_BACKOFF_CAP, ARXIV_RETRY_AFTER_CAP,
    HTTP_USER_AGENT. `transport` lets tests wrap the real HTTP transport.
    """

    # One limiter key for every client of arXiv: the terms count all our machines together.
    service = "arxiv"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        timeout: float | None = None,
        min_interval: float | None = None,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ):
        interval = settings.ARXIV_MIN_INTERVAL if min_interval is None else min_interval
        super().__init__(
            base_url=base_url or settings.ARXIV_OAI_URL,
            rate=1.0 / interval if interval > 0 else 0,
            timeout=settings.ARXIV_OAI_TIMEOUT if timeout is None else timeout,
            # arXiv can take ~180 s to answer on busy days; connecting must not.
            connect_timeout=30.0,
            retry=retry or arxiv_retry_policy(),
            transport=transport,
        )

    def __enter__(self) -> ArxivOAIClient:
        return self

    # -- the answers ---------------------------------------------------------------------------

    def refused(self, response: httpx.Response, method: str, path: str) -> ServiceError:
        return ArxivOAIClientError(
            f"HTTP {response.status_code} from {response.request.url}: {response.text[:300]!r}",
            status=response.status_code,
        )

    def gave_up(self, method, path, params, problem, unusable) -> ServiceError:
        attempts = self.retry.attempts
        where = f"{self.base_url} {params.get('verb')}"
        if isinstance(unusable, _NotWellFormed):
            return MalformedResponse(
                f"{where} {_describe(params)}: response still not well-formed after "
                f"{attempts} attempts; {problem}"
            )
        if isinstance(unusable, _CannotContinue):
            return IncompleteList(f"{where} {_describe(params)}: {problem} ({attempts} attempts)")
        return ArxivUnavailable(f"{where}: gave up after {attempts} attempts; last: {problem}")

    def get_xml(self, params: dict[str, str], parse: Callable[[bytes], T]) -> T:
        """GET the endpoint and parse the body; a body that is not well-formed XML is
        fetched again like any failed request."""

        def parse_body(response: httpx.Response) -> T:
            body = response.content
            try:
                return parse(body)
            except etree.XMLSyntaxError as exc:
                raise _NotWellFormed(f"not well-formed XML ({len(body)} bytes): {exc}") from exc

        return self.fetch("GET", "", parse_body, params=params)

    # -- verbs ---------------------------------------------------------------------------------

    def identify(self) -> oai.Identify:
        return self.get_xml({"verb": "Identify"}, oai.parse_identify)

    def list_sets(self) -> list[oai.OAISet]:
        sets: list[oai.OAISet] = []
        params = {"verb": "ListSets"}
        while True:
            page, token = self.get_xml(params, oai.parse_list_sets)
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
        return self.get_xml(params, partial(oai.parse_get_record, metadata_prefix=metadata_prefix))

    def list_records_page(
        self,
        *,
        metadata_prefix: str = "arXivRaw",
        set_spec: str = "",
        from_date: date | None = None,
        until_date: date | None = None,
        resumption_token: str = "",
        so_far: oai.ListSoFar | None = None,
    ) -> oai.ListPage:
        """One ListRecords page: the window's first, or the one a resumption token points to.

        The page must be able to continue its list (`so_far`: what the earlier pages said; by
        default, only that the token was asked for); one that cannot is asked for again.
        """
        params = _list_params(
            "ListRecords", metadata_prefix, set_spec, from_date, until_date, resumption_token
        )
        if so_far is None and resumption_token:
            so_far = oai.ListSoFar(token=resumption_token)

        def parse(body: bytes) -> oai.ListPage:
            page = oai.parse_list_records(body, metadata_prefix=metadata_prefix)
            problem = oai.list_page_problem(page, so_far)
            if problem:
                raise _CannotContinue(problem)
            return page

        return self.get_xml(params, parse)

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
        return self.get_xml(params, oai.parse_list_identifiers)

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
