"""Recorded Semantic Scholar, OpenAlex and ROR answers served over HTTP on 127.0.0.1, for the
source clients' tests and for every app's tests that read those sources (researchers' matching,
citations, institutions), which import these fixtures from here.

Every answer body is a recorded response from tests/fixtures/ (see tests/fixtures/README.md).
Batch endpoints answer with the recorded objects the request asks for, in the request's order
(null for an id with no recording, which is what the services answer for unknown ids); the only
bodies written here are error envelopes that no recording exists for.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

FIXTURES = Path(__file__).parent.parent / "fixtures"


@functools.lru_cache(maxsize=64)
def load(path: str):
    """A recorded body, parsed once per session (handlers only read it)."""
    return json.loads((FIXTURES / path).read_text(encoding="utf-8"))


def recorded_s2_papers() -> dict[str, dict]:
    """arXiv id → S2 paper object, as recorded (see fixtures README for where each comes from)."""
    return {k: v["paper"] for k, v in load("semanticscholar/arxiv_papers_recorded.json").items()}


def recorded_s2_authors() -> dict[str, dict]:
    return {a["authorId"]: a for a in load("semanticscholar/author_batch_full_fields.json")}


def recorded_oa_works() -> list[dict]:
    page = load("openalex/works_from_publication_date_2023-01-01_page1.json")
    return [load("openalex/work_W3188841554.json"), *page["results"]]


def recorded_oa_authors() -> dict[str, dict]:
    authors = {}
    for path in sorted((FIXTURES / "openalex").glob("author_A*.json")):
        data = load(f"openalex/{path.name}")
        authors[data["id"].rsplit("/", 1)[1]] = data
    return authors


@dataclass
class Sources:
    """The three services on one local server, answering from recordings."""

    server: HTTPServer
    s2_papers: dict[str, dict] = field(default_factory=recorded_s2_papers)
    s2_authors: dict[str, dict] = field(default_factory=recorded_s2_authors)
    oa_works: list[dict] = field(default_factory=recorded_oa_works)
    oa_authors: dict[str, dict] = field(default_factory=recorded_oa_authors)
    ror_records: dict[str, dict] = field(default_factory=dict)
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def log(self, request: Request, what: str) -> None:
        with self.lock:
            self.requests.append((request.method, request.path, what))

    def s2_paper_batch(self, request: Request) -> Response:
        ids = request.get_json()["ids"]
        self.log(request, ",".join(ids))
        body = []
        for requested in ids:
            assert requested.startswith("ARXIV:"), requested
            body.append(self.s2_papers.get(requested.removeprefix("ARXIV:")))
        return Response(json.dumps(body), content_type="application/json")

    def s2_author_batch(self, request: Request) -> Response:
        ids = request.get_json()["ids"]
        self.log(request, ",".join(ids))
        body = [self.s2_authors.get(i) for i in ids]
        return Response(json.dumps(body), content_type="application/json")

    def oa_works_list(self, request: Request) -> Response:
        filt = request.args["filter"]
        self.log(request, filt)
        assert filt.startswith("doi:"), filt
        dois = {f"https://doi.org/{d}" for d in filt.removeprefix("doi:").split("|")}
        assert len(dois) <= 100
        results = [w for w in self.oa_works if (w.get("doi") or "").lower() in dois]
        meta = {
            "count": len(results),
            "db_response_time_ms": 21,
            "page": 1,
            "per_page": int(request.args.get("per_page", 25)),
            "groups_count": None,
        }
        return Response(
            json.dumps({"meta": meta, "results": results, "group_by": []}),
            content_type="application/json",
        )

    def oa_authors_list(self, request: Request) -> Response:
        filt = request.args["filter"]
        self.log(request, filt)
        assert filt.startswith("openalex:"), filt
        ids = filt.removeprefix("openalex:").split("|")
        results = [self.oa_authors[i] for i in ids if i in self.oa_authors]
        meta = {
            "count": len(results),
            "db_response_time_ms": 12,
            "page": 1,
            "per_page": int(request.args.get("per_page", 25)),
            "groups_count": None,
        }
        return Response(
            json.dumps({"meta": meta, "results": results, "group_by": []}),
            content_type="application/json",
        )

    def ror_organization(self, request: Request) -> Response:
        ror_id = request.path.rsplit("/", 1)[1]
        self.log(request, ror_id)
        record = self.ror_records.get(ror_id)
        if record is None:
            # No recording of ROR's 404 exists; this envelope is written for the test.
            return Response(
                json.dumps({"errors": [f"'{ror_id}' is not a valid ROR ID"]}),
                status=404,
                content_type="application/json",
            )
        return Response(json.dumps(record), content_type="application/json")

    def install(self) -> None:
        self.server.expect_request("/s2/paper/batch", "POST").respond_with_handler(
            self.s2_paper_batch
        )
        self.server.expect_request("/s2/author/batch", "POST").respond_with_handler(
            self.s2_author_batch
        )
        self.server.expect_request("/openalex/works", "GET").respond_with_handler(
            self.oa_works_list
        )
        self.server.expect_request("/openalex/authors", "GET").respond_with_handler(
            self.oa_authors_list
        )
        self.server.expect_request(
            re.compile(r"^/ror/organizations/[^/]+$"), "GET"
        ).respond_with_handler(self.ror_organization)

    def count(self, path_part: str) -> int:
        return sum(1 for _, path, _ in self.requests if path_part in path)


@pytest.fixture
def local_server():
    # Threaded, so that a deliberately slow answer does not hold up the retry behind it.
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    if server.is_running():
        server.stop()


@pytest.fixture
def api_settings(settings, local_server):
    """Point every client at the local server, with tiny delays so retries run quickly."""
    base = local_server.url_for("").rstrip("/")
    settings.SEMANTIC_SCHOLAR_API_URL = f"{base}/s2"
    settings.OPENALEX_API_URL = f"{base}/openalex"
    settings.ROR_API_URL = f"{base}/ror"
    settings.SEMANTIC_SCHOLAR_API_KEY = "test-key"
    settings.OPENALEX_API_KEY = ""
    settings.OPENALEX_EMAIL = "tests@wovepaper.example"
    settings.ROR_CLIENT_ID = "test-client"
    settings.HTTP_RETRY_ATTEMPTS = 3
    settings.HTTP_RETRY_BACKOFF = 0.01
    settings.HTTP_RETRY_BACKOFF_MAX = 0.05
    settings.HTTP_RETRY_AFTER_MAX = 5
    settings.HTTP_TIMEOUT = 2.0
    settings.HTTP_CONNECT_TIMEOUT = 1.0
    settings.SEMANTIC_SCHOLAR_RATE = 1000
    settings.OPENALEX_RATE = 1000
    settings.ROR_RATE = 1000
    return settings


@pytest.fixture
def sources(api_settings, local_server) -> Sources:
    served = Sources(server=local_server)
    served.install()
    return served


@pytest.fixture
def slow(local_server):
    """Install a handler that answers after `seconds` (for timeouts)."""

    def install(path: str, method: str, seconds: float, body: str = "[]"):
        def handler(request: Request) -> Response:
            time.sleep(seconds)
            return Response(body, content_type="application/json")

        local_server.expect_oneshot_request(path, method).respond_with_handler(handler)

    return install


@pytest.fixture
def clean_cache():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()
