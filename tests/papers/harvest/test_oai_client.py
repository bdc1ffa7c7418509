"""The arXiv OAI-PMH client against a real HTTP server on 127.0.0.1 serving recorded answers."""

from __future__ import annotations

import threading
import time

import pytest
from django.conf import settings
from werkzeug import Response

from papers.harvest.client import (
    ArxivOAIClient,
    ArxivOAIClientError,
    ArxivUnavailable,
    MalformedResponse,
)
from tests.papers.conftest import (
    ARXIV_PAGE_1,
    CURRENT_1,
    CURRENT_2,
    CURRENT_TOKEN,
    nock,
    nock_response,
    oai_bytes,
    requested,
    serve,
)

WINDOW_2015 = {
    "verb": "ListRecords",
    "metadataPrefix": "arXiv",
    "from": "2015-01-01",
    "until": "2015-01-03",
}


def _list_2015(client):
    from datetime import date

    return client.list_records_page(
        metadata_prefix="arXiv", from_date=date(2015, 1, 1), until_date=date(2015, 1, 3)
    )


def test_identify_list_sets_get_record_send_our_user_agent(oai_url, httpserver):
    serve(httpserver, {"verb": "Identify"}, oai_bytes("identify.xml"))
    serve(httpserver, {"verb": "ListSets"}, oai_bytes("listsets.xml"))
    serve(
        httpserver,
        {"verb": "GetRecord", "identifier": "oai:arXiv.org:1412.8544", "metadataPrefix": "arXiv"},
        oai_bytes("getrecord_arXiv_1412.8544.xml"),
    )
    with ArxivOAIClient() as client:
        assert client.identify().repository_name == "arXiv"
        assert len(client.list_sets()) == 21
        page = client.get_record("1412.8544", metadata_prefix="arXiv")
    assert [r.arxiv_id for r in page.records] == ["1412.8544"]
    agents = {request.headers["User-Agent"] for request, _ in httpserver.log}
    assert agents == {settings.HTTP_USER_AGENT}
    assert "mailto:" in settings.HTTP_USER_AGENT


def test_503_with_retry_after_waits_then_retries(oai_url, httpserver):
    """The real recording: 503 `Retry-After: 10`, then the 200 (the wait is capped for tests)."""
    first, second = nock("nock_listrecords_503_then_200.json")
    assert first["status"] == 503
    httpserver.expect_ordered_request("/oai", query_string=WINDOW_2015).respond_with_response(
        nock_response(first)
    )
    httpserver.expect_ordered_request("/oai", query_string=WINDOW_2015).respond_with_response(
        nock_response(second)
    )
    with ArxivOAIClient() as client:
        started = time.monotonic()
        page = _list_2015(client)
        elapsed = time.monotonic() - started
    assert [r.arxiv_id for r in page.records] == ["1412.8544", "hep-th/9504118"]
    assert len(client.waits) == 1
    wait = client.waits[0]
    assert wait.requested == 10  # what the server asked for
    assert "HTTP 503 Retry-After 10s" in wait.reason
    assert wait.slept >= settings.ARXIV_RETRY_AFTER_CAP * 0.9 and elapsed >= wait.slept
    assert client.requests_sent == 2
    httpserver.check_assertions()


def test_retry_after_zero_backs_off_exponentially(oai_url, httpserver, settings):
    settings.ARXIV_BACKOFF_BASE = 0.02
    settings.ARXIV_BACKOFF_CAP = 1.0
    first, second = nock("nock_listrecords_503_then_200.json")
    busy = dict(first, rawHeaders=[h if h != "10" else "0" for h in first["rawHeaders"]])
    for _ in range(2):
        httpserver.expect_ordered_request("/oai", query_string=WINDOW_2015).respond_with_response(
            nock_response(busy)
        )
    httpserver.expect_ordered_request("/oai", query_string=WINDOW_2015).respond_with_response(
        nock_response(second)
    )
    with ArxivOAIClient() as client:
        page = _list_2015(client)
    assert len(page.records) == 2
    assert [w.reason for w in client.waits] == ["HTTP 503", "HTTP 503"]
    # base * 2**attempt with jitter in [half, full]
    assert 0.01 <= client.waits[0].requested <= 0.02
    assert 0.02 <= client.waits[1].requested <= 0.04


def test_list_identifiers_pages_through_a_recorded_503(oai_url, httpserver):
    """The real three-interaction recording: page 1, 503 `Retry-After: 20` on page 2, page 2."""
    page1, busy, page2 = nock("nock_listidentifiers_2016_token_503_then_200.json")
    window = {
        "verb": "ListIdentifiers",
        "metadataPrefix": "arXiv",
        "from": "2015-01-01",
        "until": "2015-03-01",
    }
    token = {"verb": "ListIdentifiers", "resumptionToken": "1083072|10001"}
    httpserver.expect_ordered_request("/oai", query_string=window).respond_with_response(
        nock_response(page1)
    )
    httpserver.expect_ordered_request("/oai", query_string=token).respond_with_response(
        nock_response(busy)
    )
    httpserver.expect_ordered_request("/oai", query_string=token).respond_with_response(
        nock_response(page2)
    )
    from datetime import date

    with ArxivOAIClient() as client:
        pages = list(
            client.list_identifiers(
                metadata_prefix="arXiv", from_date=date(2015, 1, 1), until_date=date(2015, 3, 1)
            )
        )
    assert [len(p.headers) for p in pages] == [3, 2]
    assert pages[-1].token.is_last
    assert [w.requested for w in client.waits] == [20]
    httpserver.check_assertions()


def test_timeout_is_retried(oai_url, httpserver, settings):
    settings.ARXIV_OAI_TIMEOUT = 0.3
    calls = []

    def slow_then_fast(request):
        calls.append(time.monotonic())
        if len(calls) == 1:
            time.sleep(0.8)  # longer than the client's read timeout
        return Response(
            oai_bytes("listrecords_arXiv_from2015-01-01_until2015-01-03.xml"),
            content_type="text/xml",
        )

    httpserver.expect_request("/oai", query_string=WINDOW_2015).respond_with_handler(slow_then_fast)
    with ArxivOAIClient() as client:
        page = _list_2015(client)
    assert len(page.records) == 2
    # The test server answers one request at a time, so a retry sent while the slow handler
    # still sleeps can time out too; every wait must be a timeout, and the page must arrive.
    assert len(calls) >= 2 and client.requests_sent == len(calls)
    assert client.waits and all("ReadTimeout" in w.reason for w in client.waits)


def test_truncated_body_is_fetched_again(oai_url, httpserver):
    body = oai_bytes(ARXIV_PAGE_1)
    window = {"verb": "ListRecords", "metadataPrefix": "arXiv", "set": "physics"}
    serve(httpserver, window, body[: len(body) // 2], ordered=True)
    serve(httpserver, window, body, ordered=True)
    with ArxivOAIClient() as client:
        page = client.list_records_page(metadata_prefix="arXiv", set_spec="physics")
    assert len(page.records) == 1000
    assert "not well-formed XML" in client.waits[0].reason


def test_body_that_stays_truncated_fails_clearly(oai_url, httpserver):
    body = oai_bytes(ARXIV_PAGE_1)
    serve(httpserver, {"verb": "ListRecords", "metadataPrefix": "arXiv"}, body[:100_000])
    with ArxivOAIClient() as client, pytest.raises(MalformedResponse) as info:
        client.list_records_page(metadata_prefix="arXiv")
    assert "not well-formed after 4 attempts" in str(info.value)
    assert client.requests_sent == 4


def test_persistent_503_gives_up_and_4xx_fails_at_once(oai_url, httpserver):
    serve(httpserver, {"verb": "Identify"}, "<h1>busy</h1>", status=503)
    with ArxivOAIClient() as client, pytest.raises(ArxivUnavailable) as info:
        client.identify()
    assert "gave up after 4 attempts; last: HTTP 503" in str(info.value)
    httpserver.clear()
    serve(httpserver, {"verb": "ListSets"}, "forbidden", status=403)
    with ArxivOAIClient() as client, pytest.raises(ArxivOAIClientError) as info:
        client.list_sets()
    assert client.requests_sent == 1 and "HTTP 403" in str(info.value)


def test_percent_encoded_token_is_sent_verbatim(oai_url, httpserver):
    serve(
        httpserver, {"verb": "ListRecords", "resumptionToken": CURRENT_TOKEN}, oai_bytes(CURRENT_2)
    )
    with ArxivOAIClient() as client:
        page = client.list_records_page(resumption_token=CURRENT_TOKEN)
    assert len(page.records) == 3
    assert requested(httpserver) == [{"verb": "ListRecords", "resumptionToken": CURRENT_TOKEN}]


def test_rate_limit_is_shared_between_clients_and_threads(oai_url, httpserver, settings):
    settings.ARXIV_MIN_INTERVAL = 0.25
    arrivals = []

    def record(request):
        arrivals.append(time.monotonic())
        return Response(oai_bytes(CURRENT_1), content_type="text/xml")

    httpserver.expect_request("/oai").respond_with_handler(record)

    def harvest_twice():
        with ArxivOAIClient() as client:
            for _ in range(2):
                client.list_records_page(set_spec="physics:quant-ph")

    threads = [threading.Thread(target=harvest_twice) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(arrivals) == 4
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    # Four requests from two clients in two threads took three intervals: one shared limiter
    # (each client on its own would have sent its two 0.25 s apart, side by side, in ~0.25 s).
    assert arrivals[-1] - arrivals[0] >= 3 * 0.25 - 0.03, gaps
    # Slots are taken at the client and arrivals seen at the server, which a busy machine can
    # delay by a scheduler tick or two; never two requests at once.
    assert min(gaps) >= 0.1, gaps


def test_connection_dropped_mid_body_is_retried(oai_url, httpserver):
    body = oai_bytes(CURRENT_1)
    calls = []

    def drop_then_answer(request):
        calls.append(1)
        if len(calls) == 1:

            def half_then_drop():
                yield body[: len(body) // 2]
                raise ConnectionResetError("dropped by the test server")

            # Content-Length promises the whole page; the connection ends after half of it.
            return Response(
                half_then_drop(),
                content_type="text/xml",
                headers={"Content-Length": str(len(body))},
            )
        return Response(body, content_type="text/xml")

    httpserver.expect_request("/oai").respond_with_handler(drop_then_answer)
    with ArxivOAIClient() as client:
        page = client.list_records_page(set_spec="physics:quant-ph")
    assert len(page.records) == 3 and len(calls) == 2
    assert "RemoteProtocolError" in client.waits[0].reason
