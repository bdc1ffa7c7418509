"""The resolve flow: find or create the researcher for each aligned authorship.

Identity is decided by external ids only, in a fixed order (Semantic Scholar, then OpenAlex,
then ORCID). Where the sources disagree, the records stay apart and the disagreement becomes an
IdentityConflict for the curators.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from slugify import slugify

from ..models import IdentityConflict, Researcher, ResearcherExternalId
from ..names import best_display_name, name_key
from ..selectors import (
    researcher_external_ids_held,
    researcher_ids_by_external_id,
    researcher_survivor_ids,
)
from .align import AuthorKeys

S2 = ResearcherExternalId.SEMANTIC_SCHOLAR
OPENALEX = ResearcherExternalId.OPENALEX
ORCID = ResearcherExternalId.ORCID


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
        found = researcher_ids_by_external_id(values)
        researcher_ids = {rid for _, _, rid in found}
        # Ids found on merged records lead to their survivor.
        self.survivor = researcher_survivor_ids(researcher_ids)
        self.by_key: dict[tuple[str, str], int] = {
            (source, value): self.survivor.get(rid, rid) for source, value, rid in found
        }
        # Every id the found records (and their survivors) hold, to see disagreements.
        self.held: dict[int, dict[str, set[str]]] = {}
        holders = set(self.survivor.values()) | researcher_ids
        for rid, source, value in researcher_external_ids_held(holders):
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

    attach: dict[int, int] = field(default_factory=dict)  # authorship → researcher
    new_ids: list[tuple[int, str, str]] = field(default_factory=list)  # researcher, source, value
    conflicts: list[IdentityConflict] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)  # better display names for records
    created: int = 0  # records created (in bulk, or one by one in the rare unforeseen cases)


def name_fields(display: str) -> dict[str, str]:
    """The Researcher fields a display name decides (bulk writes skip Researcher.save)."""
    return {
        "display_name": display[:255],
        "name_key": name_key(display),
        "slug": slugify(display)[:96],
    }


def resolve(keys: Sequence[AuthorKeys], index: IdentityIndex) -> Resolution:
    """Find or create the researcher for each aligned authorship.

    New records are created here (one bulk insert per batch) so that later papers in the batch
    find them by id.
    """
    resolution = Resolution()
    _create_new_records(keys, index, resolution)
    for key in keys:
        chosen = _choose(key, index, resolution)
        if chosen is None:
            continue
        resolution.attach[key.authorship.pk] = chosen
        _record_further_keys(key, chosen, index, resolution)
    return resolution


def _needs_record(key: AuthorKeys, index: IdentityIndex) -> tuple[str, str] | None:
    """The first key of an author no record can hold yet: no record has it, and no id-free
    record can be claimed through the other keys."""
    if key.s2_id and not index.get(S2, key.s2_id):
        rec_oa = index.get(OPENALEX, key.openalex_id)
        rec_orcid = index.get(ORCID, key.orcid)
        claimable = (rec_oa and not index.has(rec_oa, S2)) or (
            rec_orcid and not index.has(rec_orcid, S2)
        )
        return None if claimable else (S2, key.s2_id)
    if not key.s2_id and key.openalex_id and not index.get(OPENALEX, key.openalex_id):
        rec_orcid = index.get(ORCID, key.orcid)
        claimable = rec_orcid and not index.has(rec_orcid, OPENALEX)
        return None if claimable else (OPENALEX, key.openalex_id)
    return None


def _create_new_records(
    keys: Sequence[AuthorKeys], index: IdentityIndex, resolution: Resolution
) -> None:
    # One record per new id, even if the id appears on several papers of the batch.
    first_seen: dict[tuple[str, str], AuthorKeys] = {}
    for key in keys:
        needed = _needs_record(key, index)
        if needed is not None:
            first_seen.setdefault(needed, key)
    if not first_seen:
        return
    records = Researcher.objects.bulk_create(
        [Researcher(**name_fields(key.display_name())) for key in first_seen.values()]
    )
    if any(r.pk is None for r in records):  # a backend that does not return ids
        raise RuntimeError("bulk_create did not return primary keys")
    for (source, value), record in zip(first_seen, records, strict=True):
        index.add(record.pk, source, value)
        resolution.new_ids.append((record.pk, source, value))
    resolution.created += len(records)


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


def _create_record(
    key: AuthorKeys, index: IdentityIndex, resolution: Resolution, source: str, value: str
) -> int:
    record = Researcher.objects.create(**name_fields(key.display_name()))
    index.add(record.pk, source, value)
    resolution.new_ids.append((record.pk, source, value))
    resolution.created += 1
    return record.pk


def _record_further_keys(
    key: AuthorKeys, chosen: int, index: IdentityIndex, resolution: Resolution
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
                paper_id=key.authorship.paper_id,
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
