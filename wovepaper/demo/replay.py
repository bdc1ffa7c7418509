"""Recorded Semantic Scholar, OpenAlex and ROR answers, served over HTTP on 127.0.0.1.

The demo runs production's matching (`researchers.tasks.match_papers`, its clients, retries and
rate limits) against this server instead of the services, which cannot be reached offline. Each
answer is built only from the recordings in `recordings/` (PROVENANCE.md says where each comes
from): a batch or list request is answered with the recorded objects it asks for, in the
request's order. An id with no recording gets what the service answers for an id it does not
know (`null` in a Semantic Scholar batch, no result from OpenAlex); a ROR id with no recording
gets HTTP 503, so that the institution stays as OpenAlex describes it instead of being marked
unknown to ROR.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from django.test.utils import override_settings

from sources.openalex import work_arxiv_id
from wovepaper.lib.identifiers import arxiv_id_parsed

RECORDINGS = Path(__file__).parent / "recordings"


def _read(name: str, folder: Path):
    return json.loads((folder / name).read_text(encoding="utf-8"))


@dataclass
class Recordings:
    """The recorded answers, each with the date it was recorded and where it comes from."""

    folder: Path = RECORDINGS
    ror: dict[str, dict] = field(default_factory=dict)

    @cached_property
    def s2_papers(self) -> dict[str, dict]:
        """arXiv id → {"answer": S2 paper object, "title", "recorded", "source"}."""
        return _read("semanticscholar_papers.json", self.folder)

    @cached_property
    def s2_authors(self) -> dict[str, dict]:
        return _read("semanticscholar_authors.json", self.folder)

    @cached_property
    def openalex_works(self) -> list[dict]:
        return _read("openalex_works.json", self.folder)

    @cached_property
    def openalex_authors(self) -> dict[str, dict]:
        return _read("openalex_authors.json", self.folder)

    @cached_property
    def arxiv_categories(self) -> dict[str, dict]:
        """arXiv id → {"categories", "source"}: arXiv's own categories, where found."""
        return _read("arxiv_categories.json", self.folder)

    @cached_property
    def _works_by_doi(self) -> dict[str, dict]:
        return {(w["answer"].get("doi") or "").lower(): w["answer"] for w in self.openalex_works}

    def s2_paper_batch(self, ids: list[str]) -> list[dict | None]:
        found = []
        for requested in ids:
            record = (
                self.s2_papers.get(requested.removeprefix("ARXIV:"))
                if requested.startswith("ARXIV:")
                else None
            )
            found.append(record["answer"] if record else None)
        return found

    def s2_author_batch(self, ids: list[str]) -> list[dict | None]:
        return [r["answer"] if (r := self.s2_authors.get(i)) else None for i in ids]

    def openalex_works_by_doi(self, dois: list[str]) -> list[dict]:
        wanted = [f"https://doi.org/{d.lower()}" for d in dois]
        return [self._works_by_doi[d] for d in wanted if d in self._works_by_doi]

    def openalex_authors_by_id(self, ids: list[str]) -> list[dict]:
        return [self.openalex_authors[i]["answer"] for i in ids if i in self.openalex_authors]

    def citation_counts_recorded_on(self) -> dict[tuple[str, str], date]:
        """(source, arXiv id) → the day the service gave the paper's citation count."""
        days = {
            ("s2", arxiv_id): date.fromisoformat(v["recorded"])
            for arxiv_id, v in self.s2_papers.items()
            if v.get("recorded")
        }
        for work in self.openalex_works:
            arxiv_id = arxiv_id_parsed(work_arxiv_id(work["answer"]) or "")
            if arxiv_id and work.get("recorded"):
                days[("openalex", arxiv_id)] = date.fromisoformat(work["recorded"])
        return days

    def figures_recorded_on(self) -> dict[tuple[str, str], date]:
        """(source, author id) → the day the service gave these figures, for the "as of" line."""
        days = {("s2", k): date.fromisoformat(v["recorded"]) for k, v in self.s2_authors.items()}
        days.update(
            {
                ("openalex", k): date.fromisoformat(v["recorded"])
                for k, v in self.openalex_authors.items()
                if v["recorded"]
            }
        )
        return days


def _list_answer(results: list[dict], per_page: str) -> dict:
    """OpenAlex's list envelope, as its recorded list answers have it."""
    meta = {
        "count": len(results),
        "db_response_time_ms": 0,
        "page": 1,
        "per_page": int(per_page) if per_page.isdigit() else 25,
        "groups_count": None,
    }
    return {"meta": meta, "results": results, "group_by": []}


class _Handler(BaseHTTPRequestHandler):
    server: _ReplayServer

    def log_message(self, format, *args):  # the demo's output stays readable
        pass

    def _send(self, status: int, body) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_HEAD(self):  # the matching command's reachability probe
        self.send_response(200)
        self.end_headers()

    def do_POST(self):
        path = urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        ids = json.loads(self.rfile.read(length) or b"{}").get("ids") or []
        recordings = self.server.recordings
        if path == "/s2/paper/batch":
            self._send(200, recordings.s2_paper_batch(ids))
        elif path == "/s2/author/batch":
            self._send(200, recordings.s2_author_batch(ids))
        else:
            self._send(404, {"error": f"no recording for POST {path}"})

    def do_GET(self):
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        filt = query.get("filter", "")
        recordings = self.server.recordings
        if url.path == "/openalex/works" and filt.startswith("doi:"):
            works = recordings.openalex_works_by_doi(filt.removeprefix("doi:").split("|"))
            self._send(200, _list_answer(works, query.get("per_page", "")))
        elif url.path == "/openalex/authors" and filt.startswith("openalex:"):
            authors = recordings.openalex_authors_by_id(filt.removeprefix("openalex:").split("|"))
            self._send(200, _list_answer(authors, query.get("per_page", "")))
        elif url.path.startswith("/ror/organizations/"):
            record = recordings.ror.get(url.path.rsplit("/", 1)[1])
            if record is None:
                self._send(503, {"errors": ["no recorded answer for this ROR id"]})
            else:
                self._send(200, record)
        else:
            self._send(404, {"error": f"no recording for GET {url.path}"})


class _ReplayServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, recordings: Recordings):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.recordings = recordings


@contextmanager
def replaying(recordings: Recordings | None = None) -> Iterator[Recordings]:
    """Serve the recordings on a free local port and point the clients at it meanwhile."""
    recordings = recordings or Recordings()
    server = _ReplayServer(recordings)
    thread = threading.Thread(target=server.serve_forever, name="demo-replay", daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with override_settings(
            SEMANTIC_SCHOLAR_API_URL=f"{base}/s2",
            OPENALEX_API_URL=f"{base}/openalex",
            ROR_API_URL=f"{base}/ror",
            # A local server answers at once and always the same: no waiting between requests,
            # and no retry of an answer that cannot change.
            SEMANTIC_SCHOLAR_RATE=1000,
            OPENALEX_RATE=1000,
            ROR_RATE=1000,
            HTTP_RETRY_ATTEMPTS=1,
        ):
            yield recordings
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
