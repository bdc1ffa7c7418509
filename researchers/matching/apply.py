"""The apply flow: write one batch's outcome, inside the caller's transaction.

Attaches the authorships (except those a curator pinned), stores the new external ids, better
names and conflicts, hands the papers' source ids to `papers.services` and the authorships'
institutions to `institutions.services`, and records each paper's match state.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from institutions.services import AuthorshipAffiliations, institutions_link_authorships
from papers.models import Authorship, Paper
from papers.services import (
    PaperSourceRecord,
    authorships_save_match_links,
    papers_store_source_records,
    papers_touch,
)
from wovepaper.lib.pagecache import pages_changed

from ..models import (
    IdentityConflict,
    MatchRun,
    PaperMatchState,
    Researcher,
    ResearcherExternalId,
)
from ..names import is_abbreviated, is_person
from ..selectors import authorships_for_matching, pinned_authorship_ids
from .align import AuthorKeys, align_paper, screen_sources
from .fetch import Found
from .lease import RELEASED, match_states_write
from .resolve import IdentityIndex, name_fields, resolve

logger = logging.getLogger(__name__)


@dataclass
class BatchResult:
    papers: int = 0
    matched: int = 0
    unknown: int = 0
    failed: int = 0
    authorships_attached: int = 0
    researchers_created: int = 0
    conflicts: int = 0
    errors: list[str] = field(default_factory=list)
    researcher_ids: set[int] = field(default_factory=set)
    institution_ids: set[int] = field(default_factory=set)
    # The papers of batches a service could not answer (to be tried again).
    failed_ids: list[int] = field(default_factory=list)

    def add(self, other: BatchResult) -> None:
        for name in MatchRun.COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors.extend(e for e in other.errors if e not in self.errors)
        self.researcher_ids |= other.researcher_ids
        self.institution_ids |= other.institution_ids
        self.failed_ids.extend(other.failed_ids)


def apply_batch(papers: Sequence[Paper], found: Found, now: datetime) -> BatchResult:
    """Align, resolve and store one batch whose sources answered. Run it in a transaction: an
    IntegrityError means another worker created a record for one of these ids meanwhile."""
    result = BatchResult(papers=len(papers))
    by_paper = authorships_for_matching([p.pk for p in papers])
    found, mismatches = screen_sources(papers, found, by_paper)
    keys: list[AuthorKeys] = []
    for paper in papers:
        keys.extend(
            align_paper(
                by_paper.get(paper.pk, []),
                found.s2.get(paper.arxiv_id),
                found.openalex.get(paper.arxiv_id),
            )
        )
    resolution = resolve(keys, IdentityIndex(keys))
    result.researchers_created = resolution.created
    if resolution.new_ids:
        ResearcherExternalId.objects.bulk_create(
            [
                ResearcherExternalId(researcher_id=r, source=s, value=v)
                for r, s, v in dict.fromkeys(resolution.new_ids)
            ]
        )
    _improve_names(resolution.names)
    result.conflicts = _store_conflicts(resolution.conflicts)
    _attach(keys, resolution.attach, now, result)
    papers_store_source_records(records=_source_records(papers, found))
    known = {p.pk for p in papers if found.openalex.get(p.arxiv_id) is not None}
    result.institution_ids |= institutions_link_authorships(
        affiliations=[
            AuthorshipAffiliations(
                authorship_id=key.authorship.pk,
                paper_id=key.authorship.paper_id,
                institutions=key.openalex.institutions if key.openalex else (),
            )
            for key in keys
            if key.authorship.paper_id in known
        ]
    )
    result.matched, result.unknown = _store_states(
        papers, found, resolution.attach, by_paper, now, mismatches
    )
    return result


def _attach(
    keys: Sequence[AuthorKeys], attach: dict[int, int], now: datetime, result: BatchResult
) -> None:
    # Authorships a curator attributed by hand stay where they were put.
    pinned = pinned_authorship_ids([k.authorship.pk for k in keys])
    changed: list[Authorship] = []
    attached = 0
    for key in keys:
        authorship = key.authorship
        if authorship.pk in pinned:
            continue
        target = attach.get(authorship.pk)
        if target is None and authorship.researcher_id and not is_person(authorship.name):
            # "et al" or "ATLAS Collaboration", linked by an earlier version of matching: an
            # entry that names no person belongs to no researcher.
            result.researcher_ids.add(authorship.researcher_id)
            authorship.researcher_id = None
            authorship.matched_at = None
            authorship.match_method, authorship.match_confidence = "", None
            changed.append(authorship)
            continue
        if target is None:
            continue
        link = key.link
        method, confidence = (link.method, link.confidence) if link else ("", None)
        if authorship.researcher_id != target:
            if authorship.researcher_id:
                result.researcher_ids.add(authorship.researcher_id)
            authorship.researcher_id = target
            authorship.matched_at = now
            authorship.match_method, authorship.match_confidence = method, confidence
            changed.append(authorship)
            attached += 1
        elif (authorship.match_method, authorship.match_confidence) != (method, confidence):
            # Same researcher, newly judged (links made before confidences were kept).
            authorship.match_method, authorship.match_confidence = method, confidence
            changed.append(authorship)
        result.researcher_ids.add(target)
    authorships_save_match_links(authorships=changed)
    # The paper's record (its API answer, its Last-Modified) now links other researchers.
    papers_touch(paper_ids={a.paper_id for a in changed}, now=now)
    result.authorships_attached = attached


def _improve_names(names: dict[int, str]) -> None:
    """Replace an abbreviated display name ("E. Duflo") once a source gives the full one."""
    if not names:
        return
    current = dict(Researcher.objects.filter(pk__in=list(names)).values_list("pk", "display_name"))
    updates = []
    for pk, candidate in names.items():
        name = current.get(pk)
        if name is None or not candidate or candidate == name:
            continue
        if is_abbreviated(name) and not is_abbreviated(candidate):
            updates.append(Researcher(pk=pk, modified_at=timezone.now(), **name_fields(candidate)))
    Researcher.objects.bulk_update(
        updates, ["display_name", "name_key", "slug", "modified_at"], batch_size=500
    )
    pages_changed("researcher", [r.pk for r in updates])


def _store_conflicts(conflicts: list[IdentityConflict]) -> int:
    if not conflicts:
        return 0
    unique = {(c.kind, c.s2_id, c.openalex_id, c.orcid): c for c in conflicts}
    existing = set(
        IdentityConflict.objects.filter(
            kind__in={k[0] for k in unique},
            s2_id__in={k[1] for k in unique},
            openalex_id__in={k[2] for k in unique},
        ).values_list("kind", "s2_id", "openalex_id", "orcid")
    )
    new = [c for k, c in unique.items() if k not in existing]
    IdentityConflict.objects.bulk_create(new, ignore_conflicts=True)
    if new:
        logger.info("identity conflicts recorded: %d", len(new))
    return len(new)


def _source_records(papers: Sequence[Paper], found: Found) -> list[PaperSourceRecord]:
    """Each known paper's ids in the sources and its citation count (Semantic Scholar's first),
    with the count's source and date."""
    now = timezone.now()
    records = []
    for paper in papers:
        s2 = found.s2.get(paper.arxiv_id)
        work = found.openalex.get(paper.arxiv_id)
        if s2 is None and work is None:
            continue
        counts = [
            (c, source)
            for c, source in (
                (s2.citation_count if s2 else None, "s2"),
                (work.cited_by_count if work else None, "openalex"),
            )
            if c is not None
        ]
        count, source = counts[0] if counts else (None, None)
        records.append(
            PaperSourceRecord(
                paper_id=paper.pk,
                semantic_scholar_id=s2.paper_id if s2 else None,
                openalex_id=work.work_id if work else None,
                cited_by_count=count,
                cited_by_source=source,
                cited_by_updated_at=now if counts else None,
            )
        )
    return records


def _store_states(
    papers: Sequence[Paper],
    found: Found,
    attach: dict[int, int],
    by_paper: dict[int, list[Authorship]],
    now: datetime,
    mismatches: dict[int, dict[str, str]],
) -> tuple[int, int]:
    existing = dict(
        PaperMatchState.objects.filter(paper_id__in=[p.pk for p in papers]).values_list(
            "paper_id", "attempts"
        )
    )
    retry_unknown = now + timedelta(days=settings.MATCH_UNKNOWN_RETRY_DAYS)
    states = []
    matched = unknown = 0
    for paper in papers:
        s2_known = found.s2.get(paper.arxiv_id) is not None
        oa_known = found.openalex.get(paper.arxiv_id) is not None
        set_aside = mismatches.get(paper.pk, {})
        status = PaperMatchState.MATCHED if s2_known or oa_known else PaperMatchState.UNKNOWN
        if status == PaperMatchState.MATCHED:
            matched += 1
        else:
            unknown += 1
        states.append(
            PaperMatchState(
                paper_id=paper.pk,
                status=status,
                s2_status=_source_state(s2_known, "s2" in set_aside),
                openalex_status=_source_state(oa_known, "openalex" in set_aside),
                published=paper.published,
                attempts=existing.get(paper.pk, 0) + 1,
                last_attempt_at=now,
                # A source that did not know the paper is asked again later; none is guessed.
                next_attempt_at=None if s2_known and oa_known else retry_unknown,
                matched_authors=sum(1 for a in by_paper.get(paper.pk, []) if a.pk in attach),
                last_error="",
                mismatch="; ".join(set_aside.values()),
                **RELEASED,
            )
        )
    match_states_write(
        states,
        [
            "status",
            "s2_status",
            "openalex_status",
            "published",
            "attempts",
            "last_attempt_at",
            "next_attempt_at",
            "matched_authors",
            "last_error",
            "mismatch",
        ],
    )
    return matched, unknown


def _source_state(known: bool, set_aside: bool) -> str:
    if set_aside:
        return PaperMatchState.MISMATCH
    return PaperMatchState.FOUND if known else PaperMatchState.UNKNOWN
