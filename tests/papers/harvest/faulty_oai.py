"""A fault-injecting OAI-PMH server over real HTTP, for the harvest sweep and the worker tests.

It serves one ListRecords list cut from a real recorded page (`arXiv` format, legacy server)
into pages chained by resumption tokens `fault|<page>`, each token announcing the list's
`completeListSize` and `cursor` as the legacy server did, the last page with an empty token.
`faults[page]` is a queue of faults served, one per request, before that page is answered
whole again:

- `no-token`: the page without its `<resumptionToken>` element;
- `empty`: an empty `<ListRecords/>`, HTTP 200;
- `short`: half the page's records, and an empty token as if the list ended here;
- `truncated`: the first two thirds of the body;
- `hang`: no answer for `hang_seconds` (longer than the client's timeout);
- `5xx`: HTTP 500;
- `503`: HTTP 503 with `Retry-After: <retry_after>`.

`delay` slows every answer down (a harvest that takes long, or one to kill mid-run). The server
is threaded so that a hanging answer does not hold up the client's retry.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from pathlib import Path

from lxml import etree
from werkzeug import Request, Response
from werkzeug.serving import WSGIRequestHandler, make_server

OAI_NS = "http://www.openarchives.org/OAI/2.0/"
SOURCE = (
    Path(__file__).parent.parent.parent
    / "fixtures"
    / "arxiv-oai"
    / "listrecords_arXiv_2013-05-24_token_436115-4001.xml"
)
METADATA_PREFIX = "arXiv"
FAULTS = ("no-token", "empty", "short", "truncated", "hang", "5xx", "503")


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, *args, **kwargs) -> None:
        pass


def _q(tag: str) -> str:
    return f"{{{OAI_NS}}}{tag}"


class FaultyOAI:
    def __init__(
        self,
        *,
        pages: int = 4,
        per_page: int = 25,
        delay: float = 0.0,
        hang_seconds: float = 1.5,
        retry_after: int = 1,
    ):
        self.pages = pages
        self.per_page = per_page
        self.delay = delay
        self.hang_seconds = hang_seconds
        self.retry_after = retry_after
        self.faults: dict[int, deque[str]] = defaultdict(deque)
        self.log: list[tuple[int, str]] = []  # (page, fault or "ok") per request, in order
        # Called with the page number before each answer: a test's hook to break something
        # mid-harvest (kill a process, stop a server) at a known point.
        self.on_request: Callable[[int], None] | None = None
        self._lock = threading.Lock()
        root = etree.parse(str(SOURCE)).getroot()
        self._records = root.find(_q("ListRecords")).findall(_q("record"))[: pages * per_page]
        if len(self._records) < pages * per_page:
            raise ValueError(f"the recorded page has only {len(self._records)} records")
        listing = root.find(_q("ListRecords"))
        for child in list(listing):
            listing.remove(child)
        self._envelope = root
        self._server = make_server(
            "127.0.0.1", 0, self._app, threaded=True, request_handler=_QuietHandler
        )
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -- the list ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/oai"

    @property
    def total(self) -> int:
        return self.pages * self.per_page

    def arxiv_ids(self) -> list[str]:
        ns = {"a": "http://arxiv.org/OAI/arXiv/"}
        return [r.findtext(".//a:id", namespaces=ns) for r in self._records]

    def inject(self, page: int, *faults: str) -> None:
        """Serve these faults, in order, to the next requests for `page` (1-based)."""
        unknown = set(faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {unknown}")
        with self._lock:
            self.faults[page].extend(faults)

    def requests_for(self, page: int) -> list[str]:
        return [fault for p, fault in self.log if p == page]

    def served_pages(self) -> list[int]:
        """Pages answered whole, in order."""
        return [p for p, fault in self.log if fault == "ok"]

    # -- serving -------------------------------------------------------------------------------

    def __enter__(self) -> FaultyOAI:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _page_of(self, request: Request) -> int | None:
        token = request.args.get("resumptionToken")
        if token is None:
            return 1 if request.args.get("metadataPrefix") == METADATA_PREFIX else None
        kind, _, number = token.partition("|")
        return int(number) if kind == "fault" and number.isdigit() else None

    def _app(self, environ, start_response):
        request = Request(environ)
        page = self._page_of(request)
        if page is None or not 1 <= page <= self.pages:
            return Response(self._error("badResumptionToken"), status=200, content_type="text/xml")(
                environ, start_response
            )
        with self._lock:
            fault = self.faults[page].popleft() if self.faults[page] else "ok"
            self.log.append((page, fault))
        if self.on_request:
            self.on_request(page)
        if self.delay:
            time.sleep(self.delay)
        return self._answer(page, fault)(environ, start_response)

    def _answer(self, page: int, fault: str) -> Response:
        if fault == "hang":
            time.sleep(self.hang_seconds)
        if fault == "5xx":
            return Response("Internal Server Error", status=500)
        if fault == "503":
            return Response(
                "Service Unavailable", status=503, headers={"Retry-After": str(self.retry_after)}
            )
        body = self.page_body(page, fault)
        if fault == "truncated":
            body = body[: len(body) * 2 // 3]
        return Response(body, status=200, content_type="text/xml; charset=utf-8")

    def page_body(self, page: int, fault: str = "ok") -> bytes:
        doc = copy.deepcopy(self._envelope)
        listing = doc.find(_q("ListRecords"))
        start = (page - 1) * self.per_page
        records: Iterable = self._records[start : start + self.per_page]
        last = page == self.pages
        if fault == "short":
            records = list(records)[: self.per_page // 2]
            last = True
        if fault != "empty":
            for record in records:
                listing.append(copy.deepcopy(record))
            if fault != "no-token":
                token = etree.SubElement(
                    listing,
                    _q("resumptionToken"),
                    completeListSize=str(self.total),
                    cursor=str(start),
                )
                token.text = None if last else f"fault|{page + 1}"
        return etree.tostring(doc, xml_declaration=True, encoding="UTF-8")

    def _error(self, code: str) -> bytes:
        return (
            f"<?xml version='1.0' encoding='UTF-8'?><OAI-PMH xmlns='{OAI_NS}'>"
            "<responseDate>2013-05-24T20:43:21Z</responseDate>"
            f"<request verb='ListRecords'>{self.url}</request>"
            f"<error code='{code}'>unknown token</error></OAI-PMH>"
        ).encode()
