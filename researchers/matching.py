"""Matching: attach each arXiv authorship to a researcher identity from the sources.

For a batch of papers (newest first): ask both sources for the papers by arXiv id, align each
paper's byline with each source's author list (`researchers.alignment`), then find the
researcher for each aligned authorship by external id: the Semantic Scholar author id first,
then the OpenAlex id, then the ORCID. A paper only one source knows is matched through that
source. Records are never merged because names agree (merging is the curators' job, see
`researchers.curation`); where the sources disagree (one OpenAlex
id across two Semantic Scholar ids, or the reverse) the records stay apart and an
IdentityConflict is recorded for the curators.

If a service cannot answer, the batch changes nothing but its PaperMatchState rows (status
"failed", with the error), and is tried again later. Reruns are idempotent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Min, Q
from django.utils import timezone
from slugify import slugify

from institutions.models import AuthorshipInstitution, Institution
from papers.models import Authorship, Paper
from wovepaper.lib.http import ServiceError

from .alignment import align_authors
from .clients.openalex import OAAuthorship, OAInstitution, OAWork, OpenAlexClient
from .clients.semantic_scholar import S2Author, S2Paper, SemanticScholarClient
from .models import (
    IdentityConflict,
    MatchRun,
    PaperMatchState,
    PinnedAuthorship,
    Researcher,
    ResearcherExternalId,
)
from .names import best_display_name, is_abbreviated, name_key
from .selectors import researcher_survivor_ids

logger = logging.getLogger(__name__)

S2 = ResearcherExternalId.SEMANTIC_SCHOLAR
OPENALEX = ResearcherExternalId.OPENALEX
ORCID = ResearcherExternalId.ORCID


@dataclass
class Clients:
    s2: SemanticScholarClient
    openalex: OpenAlexClient

    @classmethod
    def from_settings(cls, **overrides) -> Clients:
        return cls(s2=SemanticScholarClient(**overrides), openalex=OpenAlexClient(**overrides))

    def close(self) -> None:
        self.s2.close()
        self.openalex.close()


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

    def add(self, other: BatchResult) -> None:
        for name in (
            "papers",
            "matched",
            "unknown",
            "failed",
            "authorships_attached",
            "researchers_created",
            "conflicts",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors.extend(e for e in other.errors if e not in self.errors)
        self.researcher_ids |= other.researcher_ids
        self.institution_ids |= other.institution_ids


@dataclass
class AuthorKeys:
    """What the sources say about the author at one byline position."""

    authorship: Authorship
    s2: S2Author | None = None
    openalex: OAAuthorship | None = None

    @property
    def s2_id(self) -> str | None:
        return self.s2.author_id if self.s2 else None

    @property
    def openalex_id(self) -> str | None:
        return self.openalex.author_id if self.openalex else None

    @property
    def orcid(self) -> str | None:
        return self.openalex.orcid if self.openalex else None

    def display_name(self) -> str:
        return best_display_name(
            self.openalex.display_name if self.openalex else "",
            self.s2.name if self.s2 else "",
            self.authorship.name,
        )


def align_paper(
    authorships: Sequence[Authorship], s2: S2Paper | None, work: OAWork | None
) -> list[AuthorKeys]:
    """Pair each authorship with the source authors its name aligns with (pure, no queries)."""
    byline = [a.name for a in authorships]
    keys = [AuthorKeys(authorship=a) for a in authorships]
    if s2 is not None and s2.authors:
        for key, index in zip(
            keys, align_authors(byline, [[a.name] for a in s2.authors]), strict=True
        ):
            if index is not None and s2.authors[index].author_id:
                key.s2 = s2.authors[index]
    if work is not None and work.authorships:
        spellings = [ship.spellings for ship in work.authorships]
        for key, index in zip(keys, align_authors(byline, spellings), strict=True):
            if index is not None and work.authorships[index].author_id:
                key.openalex = work.authorships[index]
    return keys


class IdentityIndex:
    """External ids → researcher ids for one batch, loaded in a fixed number of queries and kept
    up to date in memory as records are created or gain ids."""

    def __init__(self, keys: Iterable[AuthorKeys]):
        values: dict[str, set[str]] = {S2: set(), OPENALEX: set(), ORCID: set()}
        for key in keys:
            if key.s2_id:
                values[S2].add(key.s2_id)
            if key.openalex_id:
                values[OPENALEX].add(key.openalex_id)
            if key.orcid:
                values[ORCID].add(key.orcid)
        query = Q(pk__in=[])
        for source, vals in values.items():
            if vals:
                query |= Q(source=source, value__in=vals)
        self.by_key: dict[tuple[str, str], int] = {}
        found = list(
            ResearcherExternalId.objects.filter(query).values_list(
                "source", "value", "researcher_id"
            )
        )
        researcher_ids = {rid for _, _, rid in found}
        # Ids found on merged records lead to their survivor.
        self.survivor = researcher_survivor_ids(researcher_ids)
        for source, value, rid in found:
            self.by_key[(source, value)] = self.survivor.get(rid, rid)
        # Every id the found records (and their survivors) hold, to see disagreements.
        self.held: dict[int, dict[str, set[str]]] = {}
        holders = set(self.survivor.values()) | researcher_ids
        for rid, source, value in ResearcherExternalId.objects.filter(
            researcher_id__in=holders
        ).values_list("researcher_id", "source", "value"):
            self.held.setdefault(self.survivor.get(rid, rid), {}).setdefault(source, set()).add(
                value
            )

    def get(self, source: str, value: str | None) -> int | None:
        return self.by_key.get((source, value)) if value else None

    def has(self, researcher: int, source: str) -> bool:
        return bool(self.held.get(researcher, {}).get(source))

    def add(self, researcher: int, source: str, value: str) -> None:
        self.by_key[(source, value)] = researcher
        self.held.setdefault(researcher, {}).setdefault(source, set()).add(value)


@dataclass
class Resolution:
    """The outcome of identity resolution for a batch, written in bulk afterwards."""

    new_ids: list[tuple[int, str, str]] = field(default_factory=list)  # researcher, source, value
    conflicts: list[IdentityConflict] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)  # better display names for records
    created: int = 0  # records created one by one (the rare cases the bulk insert cannot foresee)


def _resolve(
    keys: Sequence[AuthorKeys],
    index: IdentityIndex,
    *,
    paper_of: dict[int, Paper],
    created: list[Researcher],
) -> tuple[dict[int, int], Resolution]:
    """Find or create the researcher for each aligned authorship; returns authorship → researcher.

    New records are created here (one bulk insert per batch) so that later papers in the batch
    find them by id.
    """
    resolution = Resolution()
    pending: list[tuple[AuthorKeys, str, str]] = []  # keys needing a new record: first key
    for key in keys:
        if key.s2_id and not index.get(S2, key.s2_id):
            rec_oa = index.get(OPENALEX, key.openalex_id)
            rec_orcid = index.get(ORCID, key.orcid)
            if not (
                (rec_oa and not index.has(rec_oa, S2))
                or (rec_orcid and not index.has(rec_orcid, S2))
            ):
                pending.append((key, S2, key.s2_id))
        elif not key.s2_id and key.openalex_id and not index.get(OPENALEX, key.openalex_id):
            rec_orcid = index.get(ORCID, key.orcid)
            if not (rec_orcid and not index.has(rec_orcid, OPENALEX)):
                pending.append((key, OPENALEX, key.openalex_id))
    # One record per new id, even if the id appears on several papers of the batch.
    first_seen: dict[tuple[str, str], AuthorKeys] = {}
    for key, source, value in pending:
        first_seen.setdefault((source, value), key)
    if first_seen:
        records = Researcher.objects.bulk_create(
            [Researcher(**_name_fields(key.display_name())) for key in first_seen.values()]
        )
        if any(r.pk is None for r in records):  # a backend that does not return ids
            raise RuntimeError("bulk_create did not return primary keys")
        for (source, value), record in zip(first_seen, records, strict=True):
            index.add(record.pk, source, value)
            resolution.new_ids.append((record.pk, source, value))
        created.extend(records)

    attach: dict[int, int] = {}
    for key in keys:
        chosen = _choose(key, index, resolution)
        if chosen is None:
            continue
        attach[key.authorship.pk] = chosen
        _record_further_keys(key, chosen, index, resolution, paper_of[key.authorship.paper_id])
    return attach, resolution


def _choose(key: AuthorKeys, index: IdentityIndex, resolution: Resolution) -> int | None:
    """The record for the first key (S2, else OpenAlex), claiming an id-free record via the
    other keys when that record has no id of this source yet."""
    if key.s2_id:
        record = index.get(S2, key.s2_id)
        if record is None:
            for source, value in ((OPENALEX, key.openalex_id), (ORCID, key.orcid)):
                candidate = index.get(source, value)
                if candidate and not index.has(candidate, S2):
                    record = candidate
                    break
            if record is None:
                # The record that would have been claimed got another S2 id earlier in this
                # batch: this id needs a record of its own.
                return _create_record(key, index, resolution, S2, key.s2_id)
            index.add(record, S2, key.s2_id)
            resolution.new_ids.append((record, S2, key.s2_id))
        return record
    if key.openalex_id:
        record = index.get(OPENALEX, key.openalex_id)
        if record is None:
            candidate = index.get(ORCID, key.orcid)
            if candidate and not index.has(candidate, OPENALEX):
                record = candidate
                index.add(record, OPENALEX, key.openalex_id)
                resolution.new_ids.append((record, OPENALEX, key.openalex_id))
            else:
                record = _create_record(key, index, resolution, OPENALEX, key.openalex_id)
        return record
    return None


def _name_fields(display: str) -> dict[str, str]:
    """The Researcher fields a display name decides (bulk writes skip Researcher.save)."""
    return {
        "display_name": display[:255],
        "name_key": name_key(display),
        "slug": slugify(display)[:96],
    }


def _create_record(
    key: AuthorKeys, index: IdentityIndex, resolution: Resolution, source: str, value: str
) -> int:
    record = Researcher.objects.create(**_name_fields(key.display_name()))
    index.add(record.pk, source, value)
    resolution.new_ids.append((record.pk, source, value))
    resolution.created += 1
    return record.pk


def _record_further_keys(
    key: AuthorKeys, chosen: int, index: IdentityIndex, resolution: Resolution, paper: Paper
) -> None:
    """Attach the other sources' ids to the chosen record, or record why they cannot be."""

    def conflict(kind: str, other: int | None) -> None:
        resolution.conflicts.append(
            IdentityConflict(
                kind=kind,
                researcher_id=chosen,
                other_researcher_id=other,
                s2_id=key.s2_id or "",
                openalex_id=key.openalex_id or "",
                orcid=key.orcid or "" if kind == IdentityConflict.ORCID else "",
                paper_id=paper.pk,
                position=key.authorship.position,
                name_as_written=key.authorship.name[:255],
            )
        )

    oa_id = key.openalex_id
    if oa_id:
        holder = index.get(OPENALEX, oa_id)
        if holder is None:
            if index.has(chosen, OPENALEX):
                conflict(IdentityConflict.OPENALEX_SPLIT, None)
            else:
                index.add(chosen, OPENALEX, oa_id)
                resolution.new_ids.append((chosen, OPENALEX, oa_id))
        elif holder != chosen:
            if index.has(holder, S2):
                conflict(IdentityConflict.S2_SPLIT, holder)
            elif index.has(chosen, OPENALEX):
                conflict(IdentityConflict.OPENALEX_SPLIT, holder)
            else:
                conflict(IdentityConflict.UNLINKED, holder)
    orcid = key.orcid
    if orcid:
        holder = index.get(ORCID, orcid)
        if holder is None and not index.has(chosen, ORCID):
            index.add(chosen, ORCID, orcid)
            resolution.new_ids.append((chosen, ORCID, orcid))
        elif holder is not None and holder != chosen:
            conflict(IdentityConflict.ORCID, holder)
    resolution.names[chosen] = best_display_name(
        resolution.names.get(chosen, ""), key.display_name()
    )


def _fetch(
    paper_rows: Sequence[Paper], clients: Clients
) -> tuple[dict[str, S2Paper | None], dict[str, OAWork | None]]:
    arxiv_ids = [p.arxiv_id for p in paper_rows]
    return (clients.s2.papers_by_arxiv_id(arxiv_ids), clients.openalex.works_by_arxiv_id(arxiv_ids))


def _record_failure(
    papers: Sequence[Paper], error: str, now: datetime, s2_failed: bool, openalex_failed: bool
) -> None:
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
        )
        for p in papers
    ]
    PaperMatchState.objects.bulk_create(
        states,
        update_conflicts=True,
        unique_fields=["paper"],
        update_fields=[
            "status",
            "s2_status",
            "openalex_status",
            "attempts",
            "last_attempt_at",
            "next_attempt_at",
            "last_error",
        ],
    )


def match_papers(
    paper_ids: Sequence[int], *, clients: Clients | None = None, now: datetime | None = None
) -> BatchResult:
    """Match one batch of papers (at most a few hundred). Idempotent; safe to run concurrently.

    Side effects: Authorship.researcher, new Researcher and ResearcherExternalId rows, Paper
    cited_by_count / semantic_scholar_id / openalex_id, Institution and AuthorshipInstitution
    rows, IdentityConflict evidence, PaperMatchState rows, and the stored page figures of the
    researchers and institutions touched. If a service cannot answer, only PaperMatchState rows
    change (status "failed") and the error is in the result.
    """
    now = now or timezone.now()
    result = BatchResult()
    papers = list(
        Paper.objects.filter(pk__in=list(paper_ids))
        .only("pk", "arxiv_id", "published")
        .order_by("-published", "-pk")
    )
    if not papers:
        return result
    result.papers = len(papers)
    own_clients = clients is None
    clients = clients or Clients.from_settings()
    try:
        try:
            s2_found, oa_found = _fetch(papers, clients)
        except ServiceError as exc:
            message = f"{exc}. Nothing was changed; these papers will be tried again."
            logger.warning("matching batch of %d papers: %s", len(papers), message)
            _record_failure(
                papers,
                message,
                now,
                s2_failed=exc.service == clients.s2.service,
                openalex_failed=exc.service == clients.openalex.service,
            )
            result.failed = len(papers)
            result.errors.append(str(exc))
            return result
        for attempt in range(2):
            # Each pass counts afresh: a rolled-back pass must leave no counts behind.
            applied = BatchResult(papers=result.papers)
            try:
                with transaction.atomic():
                    _apply(papers, s2_found, oa_found, now, applied)
            except IntegrityError:
                # Another worker created a record for one of these ids at the same moment:
                # the second pass finds it.
                if attempt:
                    raise
            else:
                result = applied
                break
    finally:
        if own_clients:
            clients.close()
    _after_batch(result, clients=None if own_clients else clients)
    return result


def _apply(
    papers: Sequence[Paper],
    s2_found: dict[str, S2Paper | None],
    oa_found: dict[str, OAWork | None],
    now: datetime,
    result: BatchResult,
) -> None:
    by_paper: dict[int, list[Authorship]] = {}
    for authorship in (
        Authorship.objects.filter(paper_id__in=[p.pk for p in papers])
        .only("pk", "paper_id", "position", "name", "researcher_id", "matched_at")
        .order_by("paper_id", "position")
    ):
        by_paper.setdefault(authorship.paper_id, []).append(authorship)
    paper_of = {p.pk: p for p in papers}
    all_keys: list[AuthorKeys] = []
    for paper in papers:
        all_keys.extend(
            align_paper(
                by_paper.get(paper.pk, []),
                s2_found.get(paper.arxiv_id),
                oa_found.get(paper.arxiv_id),
            )
        )
    index = IdentityIndex(all_keys)
    created: list[Researcher] = []
    attach, resolution = _resolve(all_keys, index, paper_of=paper_of, created=created)
    result.researchers_created = len(created) + resolution.created

    if resolution.new_ids:
        ResearcherExternalId.objects.bulk_create(
            [
                ResearcherExternalId(researcher_id=r, source=s, value=v)
                for r, s, v in dict.fromkeys(resolution.new_ids)
            ]
        )
    _improve_names(resolution.names)
    result.conflicts = _store_conflicts(resolution.conflicts)

    # Authorships a curator attributed by hand stay where they were put.
    pinned = set(
        PinnedAuthorship.objects.filter(
            authorship_id__in=[k.authorship.pk for k in all_keys]
        ).values_list("authorship_id", flat=True)
    )
    changed: list[Authorship] = []
    for key in all_keys:
        authorship = key.authorship
        if authorship.pk in pinned:
            continue
        target = attach.get(authorship.pk)
        if target is not None and authorship.researcher_id != target:
            if authorship.researcher_id:
                result.researcher_ids.add(authorship.researcher_id)
            authorship.researcher_id = target
            authorship.matched_at = now
            changed.append(authorship)
        if target is not None:
            result.researcher_ids.add(target)
    Authorship.objects.bulk_update(changed, ["researcher", "matched_at"], batch_size=1000)
    result.authorships_attached = len(changed)

    _update_papers(papers, s2_found, oa_found)
    result.institution_ids |= _link_institutions(all_keys, oa_found, paper_of)
    result.matched, result.unknown = _store_states(
        papers, s2_found, oa_found, attach, by_paper, now
    )


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
            updates.append(Researcher(pk=pk, **_name_fields(candidate)))
    Researcher.objects.bulk_update(updates, ["display_name", "name_key", "slug"], batch_size=500)


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


def _update_papers(
    papers: Sequence[Paper], s2_found: dict[str, S2Paper | None], oa_found: dict[str, OAWork | None]
) -> None:
    """Source ids and citation count on each paper (Semantic Scholar's count first)."""
    s2_ids = {p.arxiv_id: s2_found[p.arxiv_id].paper_id for p in papers if s2_found.get(p.arxiv_id)}
    oa_ids = {p.arxiv_id: oa_found[p.arxiv_id].work_id for p in papers if oa_found.get(p.arxiv_id)}
    batch_pks = [p.pk for p in papers]
    # The ids are unique on Paper: one held by another paper (an arXiv duplicate) is not copied.
    taken_s2 = set(
        Paper.objects.filter(semantic_scholar_id__in=list(s2_ids.values()))
        .exclude(pk__in=batch_pks)
        .values_list("semantic_scholar_id", flat=True)
    )
    taken_oa = set(
        Paper.objects.filter(openalex_id__in=list(oa_ids.values()))
        .exclude(pk__in=batch_pks)
        .values_list("openalex_id", flat=True)
    )
    seen_s2: set[str] = set()
    seen_oa: set[str] = set()
    updates = []
    for paper in papers:
        s2 = s2_found.get(paper.arxiv_id)
        work = oa_found.get(paper.arxiv_id)
        if s2 is None and work is None:
            continue
        fields = Paper(pk=paper.pk)
        s2_id = s2.paper_id if s2 else None
        oa_id = work.work_id if work else None
        fields.semantic_scholar_id = s2_id if s2_id and s2_id not in taken_s2 | seen_s2 else None
        fields.openalex_id = oa_id if oa_id and oa_id not in taken_oa | seen_oa else None
        if fields.semantic_scholar_id:
            seen_s2.add(fields.semantic_scholar_id)
        if fields.openalex_id:
            seen_oa.add(fields.openalex_id)
        counts = [
            c
            for c in (s2.citation_count if s2 else None, work.cited_by_count if work else None)
            if c is not None
        ]
        fields.cited_by_count = counts[0] if counts else None
        updates.append(fields)
    # Clear the ids first so that two papers of the batch can swap them without a collision.
    Paper.objects.filter(pk__in=[u.pk for u in updates]).update(
        semantic_scholar_id=None, openalex_id=None
    )
    Paper.objects.bulk_update(
        updates, ["semantic_scholar_id", "openalex_id", "cited_by_count"], batch_size=500
    )


def _link_institutions(
    keys: Sequence[AuthorKeys], oa_found: dict[str, OAWork | None], paper_of: dict[int, Paper]
) -> set[int]:
    """Institutions of each OpenAlex authorship, created by ROR id (or OpenAlex id) and linked.

    Returns the ids of institutions whose links changed.
    """
    wanted: dict[int, list[tuple[str | None, str | None]]] = {}  # authorship → (ror, openalex)
    details: dict[tuple[str | None, str | None], OAInstitution] = {}
    processed: set[int] = set()
    for key in keys:
        work = oa_found.get(paper_of[key.authorship.paper_id].arxiv_id)
        if work is None:
            continue
        processed.add(key.authorship.pk)
        if not key.openalex:
            continue
        for inst in key.openalex.institutions:
            wanted.setdefault(key.authorship.pk, []).append((inst.ror_id, inst.openalex_id))
            details[(inst.ror_id, inst.openalex_id)] = inst
    rors = {r for r, _ in details if r}
    oas = {o for _, o in details if o}
    existing = list(
        Institution.objects.filter(Q(ror_id__in=rors) | Q(openalex_id__in=oas)).only(
            "pk", "ror_id", "openalex_id"
        )
    )
    by_ror = {i.ror_id: i.pk for i in existing if i.ror_id}
    by_oa = {i.openalex_id: i.pk for i in existing if i.openalex_id}
    to_create: dict[tuple[str | None, str | None], Institution] = {}
    for (ror, oa), inst in details.items():
        pk = (by_ror.get(ror) if ror else None) or (by_oa.get(oa) if oa else None)
        if pk is None:
            to_create.setdefault(
                (ror, oa),
                Institution(
                    name=(inst.name or ror or oa or "")[:255],
                    ror_id=ror,
                    openalex_id=oa,
                    country_code=inst.country_code,
                    type=inst.type[:32],
                    slug=slugify(inst.name or "")[:96],
                ),
            )
            continue
        # One id known, the other new: complete the row (each id belongs to one row only).
        missing = {}
        if ror and ror not in by_ror:
            missing["ror_id"], by_ror[ror] = ror, pk
        if oa and oa not in by_oa:
            missing["openalex_id"], by_oa[oa] = oa, pk
        if missing:
            Institution.objects.filter(pk=pk).update(**missing)
    if to_create:
        Institution.objects.bulk_create(to_create.values(), ignore_conflicts=True)
        fresh = Institution.objects.filter(
            Q(ror_id__in=[r for r, _ in to_create if r])
            | Q(openalex_id__in=[o for _, o in to_create if o])
        ).only("pk", "ror_id", "openalex_id")
        for inst in fresh:
            if inst.ror_id:
                by_ror[inst.ror_id] = inst.pk
            if inst.openalex_id:
                by_oa.setdefault(inst.openalex_id, inst.pk)
    links: set[tuple[int, int]] = set()
    for authorship_pk, pairs in wanted.items():
        for ror, oa in pairs:
            pk = (by_ror.get(ror) if ror else None) or (by_oa.get(oa) if oa else None)
            if pk:
                links.add((authorship_pk, pk))
    paper_of_authorship = {k.authorship.pk: k.authorship.paper_id for k in keys}
    current = set(
        AuthorshipInstitution.objects.filter(authorship_id__in=processed).values_list(
            "authorship_id", "institution_id"
        )
    )
    stale = current - links
    if stale:
        stale_q = Q(pk__in=[])
        for authorship_pk, inst_pk in stale:
            stale_q |= Q(authorship_id=authorship_pk, institution_id=inst_pk)
        AuthorshipInstitution.objects.filter(stale_q).delete()
    AuthorshipInstitution.objects.bulk_create(
        [
            AuthorshipInstitution(
                authorship_id=a, institution_id=i, paper_id=paper_of_authorship[a]
            )
            for a, i in links - current
        ],
        ignore_conflicts=True,
        batch_size=1000,
    )
    return {i for _, i in links | current}


def _store_states(
    papers: Sequence[Paper],
    s2_found: dict[str, S2Paper | None],
    oa_found: dict[str, OAWork | None],
    attach: dict[int, int],
    by_paper: dict[int, list[Authorship]],
    now: datetime,
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
        s2_known = s2_found.get(paper.arxiv_id) is not None
        oa_known = oa_found.get(paper.arxiv_id) is not None
        status = PaperMatchState.MATCHED if s2_known or oa_known else PaperMatchState.UNKNOWN
        if status == PaperMatchState.MATCHED:
            matched += 1
        else:
            unknown += 1
        states.append(
            PaperMatchState(
                paper_id=paper.pk,
                status=status,
                s2_status=PaperMatchState.FOUND if s2_known else PaperMatchState.UNKNOWN,
                openalex_status=PaperMatchState.FOUND if oa_known else PaperMatchState.UNKNOWN,
                published=paper.published,
                attempts=existing.get(paper.pk, 0) + 1,
                last_attempt_at=now,
                # A source that did not know the paper is asked again later; none is guessed.
                next_attempt_at=None if s2_known and oa_known else retry_unknown,
                matched_authors=sum(1 for a in by_paper.get(paper.pk, []) if a.pk in attach),
                last_error="",
            )
        )
    PaperMatchState.objects.bulk_create(
        states,
        update_conflicts=True,
        unique_fields=["paper"],
        update_fields=[
            "status",
            "s2_status",
            "openalex_status",
            "published",
            "attempts",
            "last_attempt_at",
            "next_attempt_at",
            "matched_authors",
            "last_error",
        ],
    )
    return matched, unknown


def _after_batch(result: BatchResult, *, clients: Clients | None) -> None:
    """Figures for new researchers, ROR details for new institutions, then the stored stats.

    A service failing here is logged and left to the scheduled refresh: the matching itself is
    already committed.
    """
    from institutions.services import institutions_complete_from_ror, institutions_update_stats

    from .figures import researchers_refresh_figures
    from .stats import researchers_update_stats

    if result.researcher_ids:
        missing = list(
            Researcher.objects.filter(
                pk__in=result.researcher_ids, figures_updated_at__isnull=True
            ).values_list("pk", flat=True)
        )
        if missing:
            try:
                researchers_refresh_figures(missing, clients=clients)
            except ServiceError as exc:
                result.errors.append(f"figures not refreshed: {exc}")
                logger.warning("figures not refreshed: %s", exc)
        researchers_update_stats(result.researcher_ids)
    if result.institution_ids:
        try:
            institutions_complete_from_ror(institution_ids=result.institution_ids)
        except ServiceError as exc:
            result.errors.append(f"institutions not completed from ROR: {exc}")
            logger.warning("ROR completion: %s", exc)
        institutions_update_stats(result.institution_ids)


def papers_to_match(
    *, limit: int, since: datetime | None = None, now: datetime | None = None
) -> list[int]:
    """The next papers to match: never tried (newest first), then retries that are due.

    Bounded work for any table size: the never-tried sweep resumes below the oldest paper
    already tried (index on PaperMatchState.published) plus a window of recent days for papers
    that arrived after the sweep passed; retries come from the index on next_attempt_at.
    """
    now = now or timezone.now()
    picked: list[int] = []
    base = Paper.objects.filter(match_state__isnull=True)
    if since:
        base = base.filter(published__gte=since)
    recent = base.filter(published__gte=now - timedelta(days=7))
    picked.extend(recent.order_by("-published", "-pk").values_list("pk", flat=True)[:limit])
    if len(picked) < limit:
        floor = PaperMatchState.objects.aggregate(oldest=Min("published"))["oldest"]
        older = base.exclude(pk__in=picked)
        if floor is not None:
            older = older.filter(Q(published__lte=floor) | Q(published__isnull=True))
        picked.extend(
            older.order_by("-published", "-pk").values_list("pk", flat=True)[: limit - len(picked)]
        )
    if len(picked) < limit:
        due = PaperMatchState.objects.filter(next_attempt_at__lte=now)
        if since:
            due = due.filter(published__gte=since)
        picked.extend(
            due.order_by("next_attempt_at").values_list("paper_id", flat=True)[
                : limit - len(picked)
            ]
        )
    return picked


def papers_waiting_count(*, since: datetime | None = None, now: datetime | None = None) -> int:
    """How many papers `papers_to_match` would hand out: never tried, or due for a retry."""
    now = now or timezone.now()
    never = Paper.objects.filter(match_state__isnull=True)
    due = PaperMatchState.objects.filter(next_attempt_at__lte=now)
    if since:
        never = never.filter(published__gte=since)
        due = due.filter(published__gte=since)
    return never.count() + due.count()


ProgressCallback = Callable[[BatchResult], None]


def match_run(
    paper_ids: Sequence[int] | None = None,
    *,
    trigger: str,
    limit: int | None = None,
    since: datetime | None = None,
    batch_size: int | None = None,
    clients: Clients | None = None,
    progress: ProgressCallback | None = None,
    stop_on_failure: bool = True,
) -> tuple[MatchRun, BatchResult]:
    """Match the given papers, or the next `limit` papers to match, batch by batch.

    Records a MatchRun with the counts. With `stop_on_failure`, the first batch a service could
    not answer ends the run (the rest would fail the same way and only wait for retries).
    """
    batch_size = batch_size or settings.MATCH_BATCH_SIZE
    run = MatchRun.objects.create(trigger=trigger[:32])
    total = BatchResult()
    own_clients = clients is None
    clients = clients or Clients.from_settings()
    try:
        remaining = limit
        explicit = list(paper_ids) if paper_ids is not None else None
        position = 0
        while True:
            size = batch_size if remaining is None else min(batch_size, remaining)
            if size <= 0:
                break
            if explicit is not None:
                batch = explicit[position : position + size]
                position += size
            else:
                batch = papers_to_match(limit=size, since=since)
            if not batch:
                break
            result = match_papers(batch, clients=clients)
            total.add(result)
            if progress:
                progress(result)
            if remaining is not None:
                remaining -= len(batch)
            if result.failed and stop_on_failure:
                break
    finally:
        if own_clients:
            clients.close()
    run.finished_at = timezone.now()
    run.papers, run.matched, run.unknown, run.failed = (
        total.papers,
        total.matched,
        total.unknown,
        total.failed,
    )
    run.authorships_attached = total.authorships_attached
    run.researchers_created = total.researchers_created
    run.conflicts = total.conflicts
    if total.failed and not total.matched and not total.unknown:
        run.status = MatchRun.UNREACHABLE
    elif total.failed or total.errors:
        run.status = MatchRun.PARTIAL
    run.message = "\n".join(total.errors)[:5000]
    run.save()
    return run, total
