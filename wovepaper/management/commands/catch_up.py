"""`manage.py catch_up`: what an operator runs after the broker was down (or tasks were lost).

Every store derived from the papers, one after another, each with its own count:

- search: PostgreSQL's search documents still missing or stale are built here (the database
  engine); with an engine (tantivy, OpenSearch), its documents of every record changed since
  its last catch-up round are written here (`engine_catch_up`), or, should its writer be held
  elsewhere, the round is queued for the search worker;
- vectors: the vector index (usearch's files, pgvector's table) compared with the stored
  vectors range by range: what it lacks (a batch whose index message was lost) or holds no
  longer current is counted and goes to its one writer, the search worker, as
  `search.index_vectors` messages (written here without a broker);
- embeddings: the papers without a vector from the configured model go to the embed queue,
  `papers.embed_papers` messages of EMBED_TASK_CHUNK ids;
- matching: one `researchers.match_next_batch` per MATCH_BATCH_SIZE papers waiting for it;
- analysis: the papers without a current analysis are counted, and one
  `papers.analyse_backlog` queued for the newest ANALYSIS_BATCH_SIZE of them (beat sends the
  next ones).

Without a broker (tasks inline) nothing is queued: it says which commands do the rest here.
Safe to run again: each store takes only what is still pending.
"""

from __future__ import annotations

from math import ceil

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from papers.analysis import papers_needing_analysis
from papers.search.embedding_stage import TASK_CHUNK as EMBED_TASK_CHUNK
from papers.search.embedding_stage import papers_pending
from papers.search.postgres_documents import search_index_pending
from researchers.matching import papers_waiting_count
from wovepaper.lib.queueing import broker_forget_failure, send_now
from wovepaper.lib.search.engine_feed import (
    TASK_CHUNK as INDEX_TASK_CHUNK,
)
from wovepaper.lib.search.engine_feed import (
    collection_named,
    engine_catch_up,
    engine_configured,
    engine_reconcile,
    vectors_reconcile,
)

STORES = ("search", "vectors", "embeddings", "matching", "analysis")
# Pending ids read per query while queueing the embeddings.
EMBED_WALK = 5000


class BrokerAway(Exception):
    pass


class Command(BaseCommand):
    help = (
        "Bring every derived store up to date after the broker was down or tasks were lost: "
        "search (here), then the vector index, embeddings, matching and analysis (queued for "
        "the workers)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--only",
            action="append",
            choices=STORES,
            help="this store only (repeatable); default: all of them",
        )

    def handle(self, *args, only: list[str] | None, **options):
        stores = only or list(STORES)
        if "search" in stores:
            self.search()
        queued = [store for store in stores if store != "search"]
        if not queued:
            return
        if settings.CELERY_TASK_ALWAYS_EAGER:
            self.without_broker(queued)
            return
        broker_forget_failure()  # the operator says it is back: ask it
        try:
            for store in queued:
                getattr(self, store)()
        except BrokerAway as exc:
            raise CommandError(
                f"the Celery broker is unreachable: {exc}; run this again once it is back"
            ) from exc

    def say(self, text: str) -> None:
        self.stdout.write(text)

    def search(self) -> None:
        if not engine_configured():
            self.say(f"search documents built: {search_index_pending()}")
            return
        written = {}
        for name in settings.SEARCH_COLLECTIONS:
            try:
                written[name] = engine_catch_up(collection_named(name))
            except Exception as exc:  # noqa: BLE001 (the writer held elsewhere, a cluster away)
                if failure := send_now("search.engine_catch_up"):
                    raise CommandError(
                        f"search engine: could not write here ({type(exc).__name__}: {exc}) "
                        f"nor queue its catch-up ({failure})"
                    ) from exc
                self.say(
                    f"search engine ({settings.SEARCH_ENGINE}): could not write here "
                    f"({type(exc).__name__}: {exc}); its catch-up round is queued for the "
                    "search worker"
                )
                return
        counts = ", ".join(f"{name} {count}" for name, count in written.items())
        self.say(
            f"search engine ({settings.SEARCH_ENGINE}): documents written: {counts} "
            "(every record changed since its last catch-up round)"
        )
        for name in settings.SEARCH_COLLECTIONS:
            # A lost message for a record unchanged since: found only by comparing every id.
            seen = engine_reconcile(collection_named(name))
            if seen is not None:
                self.say(f"search engine ({settings.SEARCH_ENGINE}) index of {name}: {seen}")

    def vectors(self, *, here: bool = False) -> None:
        """Compare every collection's vector index with its stored vectors; queue what differs
        for the writer (the search worker), or write it here when there is no broker."""
        for name in settings.SEARCH_COLLECTIONS:
            collection = collection_named(name)
            if collection.vectors is None:
                continue

            def queue(ids: list[int], collection_name: str = name) -> None:
                self._send(
                    "search.index_vectors", ids, args=(collection_name,), chunk=INDEX_TASK_CHUNK
                )

            seen = vectors_reconcile(collection, repair=None if here else queue)
            engine = settings.VECTOR_ENGINE
            if seen is None:
                why = (
                    "the exact engine reads the stored vectors themselves"
                    if engine == "exact"
                    else "none written yet; searches read the stored vectors meanwhile"
                )
                self.say(f"vector index ({engine}) of {name}: nothing to compare ({why})")
                continue
            done = "repaired here" if here else "queued for the search worker"
            self.say(
                f"vector index ({engine}) of {name}: {seen.examined} stored vectors examined; "
                f"missing from the index: {seen.missing}; there without a current vector: "
                f"{seen.extra}; {done}: {seen.repaired}"
            )

    def embeddings(self) -> None:
        pending = last = messages = 0
        while ids := list(
            papers_pending()
            .filter(pk__gt=last)
            .order_by("pk")
            .values_list("pk", flat=True)[:EMBED_WALK]
        ):
            self._send("papers.embed_papers", ids, chunk=EMBED_TASK_CHUNK)
            pending += len(ids)
            messages += ceil(len(ids) / EMBED_TASK_CHUNK)
            last = ids[-1]
        self.say(
            f"embeddings: {pending} papers without a vector; queued: {messages} "
            f"papers.embed_papers tasks of up to {EMBED_TASK_CHUNK} papers"
        )

    def matching(self) -> None:
        waiting = papers_waiting_count()
        batches = ceil(waiting / settings.MATCH_BATCH_SIZE)
        for sent in range(batches):
            self._send(
                "researchers.match_next_batch",
                kwargs={"limit": settings.MATCH_BATCH_SIZE},
                done=f"{sent} of {batches} matching batches were queued",
            )
        self.say(
            f"matching: {waiting} papers waiting; queued: {batches} "
            f"researchers.match_next_batch tasks of up to {settings.MATCH_BATCH_SIZE} papers"
        )

    def analysis(self) -> None:
        backlog = papers_needing_analysis().count()
        if backlog:
            self._send("papers.analyse_backlog")
        batch = min(backlog, settings.ANALYSIS_BATCH_SIZE)
        self.say(
            f"analysis: {backlog} papers without a current analysis; queued: "
            f"{1 if backlog else 0} papers.analyse_backlog task for the newest {batch} of them "
            "(beat sends the next every ANALYSIS_BACKLOG_SECONDS)"
        )

    def _send(self, task: str, ids=None, *, done: str = "", **options) -> None:
        if failure := send_now(task, ids, **options):
            raise BrokerAway(f"{failure}{f' after {done}' if done else ''} (sending {task})")

    def without_broker(self, stores: list[str]) -> None:
        if "vectors" in stores:
            self.vectors(here=True)  # no search worker without a broker: this is the writer
            stores = [store for store in stores if store != "vectors"]
        here = {
            "embeddings": (lambda: papers_pending().count(), "`manage.py embed_papers`"),
            "matching": (papers_waiting_count, "`manage.py match_researchers`"),
            "analysis": (lambda: papers_needing_analysis().count(), "`manage.py analyse_papers`"),
        }
        for store in stores:
            count, command = here[store]
            self.say(
                f"{store}: {count()} papers pending; there is no broker to queue them on: "
                f"{command} does them here"
            )
