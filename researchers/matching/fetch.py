"""The fetch flow: ask both sources for a batch's papers by arXiv id.

When a service cannot answer, the batch's PaperMatchState rows say so and nothing else changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from papers.models import Paper
from sources.openalex import OAWork, OpenAlexClient
from sources.semantic_scholar import S2Paper, SemanticScholarClient

from ..models import PaperMatchState
from .lease import RELEASED, match_states_write


@dataclass
class Clients:
    s2: SemanticScholarClient
    openalex: OpenAlexClient

    @classmethod
    def from_settings(cls, **overrides: Any) -> Clients:
        return cls(s2=SemanticScholarClient(**overrides), openalex=OpenAlexClient(**overrides))

    def close(self) -> None:
        self.s2.close()
        self.openalex.close()


@dataclass(frozen=True)
class Found:
    """What each source answered for a batch, by arXiv id (None: the source does not know it)."""

    s2: dict[str, S2Paper | None]
    openalex: dict[str, OAWork | None]


def fetch_sources(papers: Sequence[Paper], clients: Clients) -> Found:
    """Both sources' records for these papers. Raises ServiceError when a service cannot
    answer."""
    arxiv_ids = [p.arxiv_id for p in papers]
    return Found(
        s2=clients.s2.papers_by_arxiv_id(arxiv_ids),
        openalex=clients.openalex.complete_authors(clients.openalex.works_by_arxiv_id(arxiv_ids)),
    )


def record_failure(
    papers: Sequence[Paper], error: str, now: datetime, *, s2_failed: bool, openalex_failed: bool
) -> None:
    """Mark the batch failed (retried after MATCH_FAILED_RETRY_MINUTES); nothing else changes."""
    existing = list(
        PaperMatchState.objects.filter(paper_id__in=[p.pk for p in papers]).values_list(
            "paper_id", "attempts", "status"
        )
    )
    attempts = {pk: n for pk, n, _ in existing}
    # A paper matched before keeps its status: a failed retry must not hide earlier success.
    matched_before = {pk for pk, _, status in existing if status == PaperMatchState.MATCHED}
    retry_at = now + timedelta(minutes=settings.MATCH_FAILED_RETRY_MINUTES)
    states = [
        PaperMatchState(
            paper_id=p.pk,
            status=PaperMatchState.MATCHED if p.pk in matched_before else PaperMatchState.FAILED,
            s2_status=PaperMatchState.ERROR if s2_failed else PaperMatchState.NOT_TRIED,
            openalex_status=PaperMatchState.ERROR if openalex_failed else PaperMatchState.NOT_TRIED,
            published=p.published,
            attempts=attempts.get(p.pk, 0) + 1,
            last_attempt_at=now,
            next_attempt_at=retry_at,
            last_error=error[:2000],
            **RELEASED,
        )
        for p in papers
    ]
    match_states_write(
        states,
        [
            "status",
            "s2_status",
            "openalex_status",
            "attempts",
            "last_attempt_at",
            "next_attempt_at",
            "last_error",
        ],
    )
