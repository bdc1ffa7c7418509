"""What a harvest hands on after each page commits: search documents, embeddings and matching.

Both go through the broker by task name (the consumers are `papers.index_search` and, in
another app, `researchers.match_papers`; naming them keeps this module free of both). Without a
broker, Celery runs them inline.

When the broker cannot be reached, the run says so once (a log line, a note on the run) and
stops trying it for the rest of the run, instead of paying a connection timeout and a
traceback per page: from then on the pages' search documents are built here, in the harvest's
own process, so every paper is searchable when the run ends, and matching is left for
`manage.py catch_up` (which queues what is pending) or the matching backlog sweep.
"""

from __future__ import annotations

import logging
from itertools import islice

from django.conf import settings
from django.utils import timezone

from wovepaper.lib.queueing import send_now
from wovepaper.lib.search.engine_feed import engine_index_enqueue

from ..search import PAPERS
from ..search.embedding_stage import embed_enqueue
from ..search.postgres_documents import search_index_papers

logger = logging.getLogger(__name__)

INDEX_TASK_NAME = "papers.index_search"
MATCH_TASK_NAME = "researchers.match_papers"
MATCH_BATCH = 500


class HandOff:
    """One harvest run's hand-offs, and whether the broker has been given up on."""

    def __init__(self) -> None:
        self.broker_down: str = ""
        self.indexed_here = 0
        self.matching_not_queued = 0

    def page_committed(self, paper_ids: list[int]) -> None:
        if not paper_ids:
            return
        self.index(paper_ids)
        engine_index_enqueue(PAPERS, paper_ids)
        if not self.broker_down:  # else the embedding sweep takes them once it is back
            embed_enqueue(paper_ids)
        self.match(paper_ids)

    def index(self, paper_ids: list[int]) -> None:
        if not self.broker_down:
            # An inline failure is logged there and left to the periodic sweep.
            if not (failure := send_now(INDEX_TASK_NAME, paper_ids)):
                return
            self._give_up_on_broker(failure)
        self.indexed_here += search_index_papers(paper_ids)

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
            failure = send_now(MATCH_TASK_NAME, chunk, kwargs={"requested_at": requested_at})
            if failure:
                self._give_up_on_broker(failure)
                self.matching_not_queued += len(chunk)
            else:
                sent += 1
        return sent

    def _give_up_on_broker(self, failure: str) -> None:
        self.broker_down = failure
        logger.warning("%s", self.notice())

    def notice(self) -> str:
        """What the operator needs to know once the broker was given up on ("" if it was not)."""
        if not self.broker_down:
            return ""
        text = (
            f"the Celery broker is unreachable ({self.broker_down}); this run stopped using it: "
            "search documents are built in this process"
        )
        if settings.HARVEST_ENQUEUE_MATCHING:
            text += (
                f", and matching ({self.matching_not_queued} papers so far) is left for "
                "`manage.py catch_up` once the broker is back"
            )
        return text
