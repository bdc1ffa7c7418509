"""What a harvest hands on after each page commits: search documents, the search engine's
documents, embeddings and matching.

Each goes through the broker by task name (the consumers are `papers.index_search`,
`search.index_engine`, `papers.embed_papers` and, in another app, `researchers.match_papers`;
naming them keeps this module free of all of them). Without a broker, Celery runs them inline.

When the broker cannot be reached, the run says so once (a log line, or the command's own line
on stderr; a note in the run's errors) and stops trying it for the rest of the run, instead of
paying a connection timeout and a log line per page. From then on every page is made searchable
here, in the harvest's own process: PostgreSQL's search documents are built, or, with a search
engine, its documents are written (should the engine's writer be held elsewhere, the ids wait
for the next page's write, and the last page's for the engine's catch-up). Embeddings and
matching are left to the sweeps once the broker is back (`papers.embed_pending`, the matching
backlog), or to `manage.py catch_up`, which queues all of it at once.
"""

from __future__ import annotations

import logging
from itertools import islice

from django.conf import settings
from django.utils import timezone

from wovepaper.lib.queueing import send_now
from wovepaper.lib.search import backend_for
from wovepaper.lib.search.engine_feed import engine_configured, engine_index_send

from ..search import PAPERS
from ..search.embedding_stage import embed_enqueue
from ..search.postgres_documents import search_index_papers

logger = logging.getLogger(__name__)

INDEX_TASK_NAME = "papers.index_search"
MATCH_TASK_NAME = "researchers.match_papers"
MATCH_BATCH = 500


class HandOff:
    """One harvest run's hand-offs, and whether the broker has been given up on."""

    def __init__(self, *, announce: bool = True) -> None:
        # Whether giving up on the broker is logged: a command that prints `notice()` itself
        # (with the run's final counts) says it in that one line instead.
        self.announce = announce
        self.broker_down: str = ""
        self.indexed_here = 0
        self.engine_indexed_here = 0
        # Ids the engine did not take from this process yet (its writer was held elsewhere).
        self.engine_waiting: list[int] = []
        self.engine_failure = ""
        self.embedding_not_queued = 0
        self.matching_not_queued = 0

    def page_committed(self, paper_ids: list[int]) -> None:
        if not paper_ids:
            return
        self.index(paper_ids)
        self.index_engine(paper_ids)
        if self.broker_down:
            if settings.EMBED_AFTER_WRITES:
                self.embedding_not_queued += len(paper_ids)
        else:
            embed_enqueue(paper_ids)
        self.match(paper_ids)

    def index(self, paper_ids: list[int]) -> None:
        if not self.broker_down:
            # An inline failure is logged there and left to the periodic sweep.
            if not (failure := send_now(INDEX_TASK_NAME, paper_ids, quiet=True)):
                return
            self._give_up_on_broker(failure)
        self.indexed_here += search_index_papers(paper_ids)

    def index_engine(self, paper_ids: list[int]) -> None:
        """The engine's documents (tantivy, OpenSearch): through its indexer's queue, or
        written from here once the broker is given up on."""
        if not engine_configured():
            return
        if not self.broker_down:
            if not (failure := engine_index_send(PAPERS, paper_ids, quiet=True)):
                return
            self._give_up_on_broker(failure)
        ids = [*self.engine_waiting, *paper_ids]
        try:
            self.engine_indexed_here += backend_for(PAPERS).index(ids)
        except Exception as exc:  # noqa: BLE001 (a held writer, a cluster away: the next page)
            if not self.engine_failure:
                logger.warning(
                    "search engine: could not write from the harvest (%s: %s); its papers "
                    "wait for the next page, or for the engine's catch-up",
                    type(exc).__name__,
                    exc,
                )
            self.engine_failure = f"{type(exc).__name__}: {exc}"
            self.engine_waiting = ids
        else:
            self.engine_waiting = []

    def match(self, paper_ids: list[int]) -> int:
        """Queue matching in batches; returns how many batches were sent."""
        if not settings.HARVEST_ENQUEUE_MATCHING:
            return 0
        sent = 0
        requested_at = timezone.now().isoformat()
        iterator = iter(paper_ids)
        while chunk := list(islice(iterator, MATCH_BATCH)):
            if self.broker_down:
                self.matching_not_queued += len(chunk)
                continue
            # A backlog batch that took these papers after this commit has done the work.
            failure = send_now(
                MATCH_TASK_NAME, chunk, kwargs={"requested_at": requested_at}, quiet=True
            )
            if failure:
                self._give_up_on_broker(failure)
                self.matching_not_queued += len(chunk)
            else:
                sent += 1
        return sent

    def _give_up_on_broker(self, failure: str) -> None:
        self.broker_down = failure
        if self.announce:
            logger.warning("%s", self.notice())

    def notice(self) -> str:
        """What the operator needs to know once the broker was given up on ("" if it was not),
        with the counts so far."""
        if not self.broker_down:
            return ""
        where = (
            "the search engine's documents are written"
            if engine_configured()
            else ("search documents are built")
        )
        text = (
            f"the Celery broker is unreachable ({self.broker_down}); this run stopped using "
            f"it: {where} in this process"
        )
        if self.engine_waiting:
            text += (
                f" (but for {len(self.engine_waiting)} papers the engine did not take: "
                f"{self.engine_failure}; its catch-up takes them)"
            )
        left = []
        if settings.EMBED_AFTER_WRITES:
            left.append(f"embeddings ({self.embedding_not_queued} papers so far)")
        if settings.HARVEST_ENQUEUE_MATCHING:
            left.append(f"matching ({self.matching_not_queued} papers so far)")
        if left:
            text += (
                f", and {' and '.join(left)} {'are' if len(left) > 1 else 'is'} left for "
                "`manage.py catch_up` (or the sweeps) once the broker is back"
            )
        return text
