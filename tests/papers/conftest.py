"""Fixtures for the OAI-PMH tests: the recorded responses and a fast, real-HTTP client setup."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import call_command
from werkzeug import Response

OAI_DIR = Path(__file__).parent.parent / "fixtures" / "arxiv-oai"

ARXIV_PAGE_1 = "listrecords_arXiv_2013-05-24_token_436115-4001.xml"
ARXIV_PAGE_2 = "listrecords_arXiv_2013-05-25_token_436115-405001.xml"
ARXIV_PAGE_3 = "legacy_listrecords_arXiv_last_page_empty_token.xml"
RAW_PAGE = "listrecords_arXivRaw_2014-01-16_token_496549-46001.xml"
CURRENT_1 = "current_listrecords_arXivRaw_page1.xml"
CURRENT_2 = "current_listrecords_arXivRaw_page2_last.xml"
CURRENT_TOKEN = (
    "verb%3DListRecords%26metadataPrefix%3DarXivRaw%26set%3Dphysics%253Aquant-ph"
    "%26from%3D2008-01-25%26skip%3D3"
)


def oai_bytes(name: str) -> bytes:
    return (OAI_DIR / name).read_bytes()


def nock(name: str) -> list[dict]:
    return json.loads((OAI_DIR / name).read_text())


def nock_response(interaction: dict) -> Response:
    """A werkzeug response with the recorded status, headers and body of a nock interaction."""
    if "rawHeaders" in interaction:
        raw = interaction["rawHeaders"]
        headers = dict(zip(raw[::2], raw[1::2], strict=True))
    else:
        headers = dict(interaction["headers"])
    # The server computes framing for the body it sends; recorded framing headers would lie.
    for name in list(headers):
        if name.lower() in {"content-length", "transfer-encoding", "connection"}:
            del headers[name]
    return Response(interaction["response"], status=interaction["status"], headers=headers)


@pytest.fixture
def oai_url(settings, httpserver) -> str:
    """Point the harvester at the local server, with delays small enough for tests.

    The waiting code paths (limiter, Retry-After, backoff) still run; they just wait
    milliseconds.
    """
    url = httpserver.url_for("/oai")
    point_harvester_at(settings, url)
    yield url
    cache.clear()


def harvest_command(*args: str) -> tuple[str, str]:
    """`manage.py harvest_arxiv --metadata-prefix arXiv --no-progress ARGS`: (stdout, stderr)."""
    out, err = StringIO(), StringIO()
    call_command(
        "harvest_arxiv",
        "--metadata-prefix",
        "arXiv",
        "--no-progress",
        *args,
        stdout=out,
        stderr=err,
    )
    return out.getvalue(), err.getvalue()


def point_harvester_at(
    settings,
    url: str,
    *,
    interval: float = 0.01,
    timeout: float = 2.0,
    retries: int = 3,
    retry_after_cap: float = 0.05,
) -> None:
    """Harvest from `url` with waits of milliseconds, no matching hand-off, a clean cache."""
    settings.ARXIV_OAI_URL = url
    settings.ARXIV_MIN_INTERVAL = interval
    settings.ARXIV_OAI_TIMEOUT = timeout
    settings.ARXIV_OAI_MAX_RETRIES = retries
    settings.ARXIV_BACKOFF_BASE = 0.01
    settings.ARXIV_BACKOFF_CAP = 0.05
    settings.ARXIV_RETRY_AFTER_CAP = retry_after_cap
    settings.HARVEST_ENQUEUE_MATCHING = False
    cache.clear()


def serve(
    httpserver,
    query: dict,
    body: bytes | str,
    *,
    status: int = 200,
    ordered=False,
    oneshot=False,
    headers: dict | None = None,
):
    """Answer GET /oai with exactly these query parameters (decoded, as the server sees them)."""
    if ordered:
        expect = httpserver.expect_ordered_request
    elif oneshot:
        expect = httpserver.expect_oneshot_request
    else:
        expect = httpserver.expect_request
    expect("/oai", method="GET", query_string=query).respond_with_data(
        body, status=status, content_type="text/xml; charset=utf-8", headers=headers or {}
    )


def serve_arxiv_chain(httpserver, *, window: dict, ordered: bool = False) -> None:
    """Three legacy `arXiv` pages chained by their real tokens; the last token is empty."""
    serve(httpserver, {"verb": "ListRecords", **window}, oai_bytes(ARXIV_PAGE_1), ordered=ordered)
    serve(
        httpserver,
        {"verb": "ListRecords", "resumptionToken": "436115|5001"},
        oai_bytes(ARXIV_PAGE_2),
        ordered=ordered,
    )
    serve(
        httpserver,
        {"verb": "ListRecords", "resumptionToken": "436115|406001"},
        oai_bytes(ARXIV_PAGE_3),
        ordered=ordered,
    )


def requested(httpserver) -> list[dict]:
    """The query of every request the server received, in order."""
    return [dict(request.args) for request, _response in httpserver.log]


@pytest.fixture(scope="session")
def httpserver_listen_address():
    return ("127.0.0.1", 0)
