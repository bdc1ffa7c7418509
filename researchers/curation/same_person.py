"""One person, one record: records the sources' own ids prove to be one person are merged, and
name variants with co-authors in common are proposed to the curators with their evidence.

**Merged** (through `decisions.researchers_merge`: reversible by a split, with a CurationEntry
whose actor is none and whose note gives the evidence, the folded record's pages and API ids
leading to the survivor): the two records of an open identity conflict that says one byline
slot holds both of them, as matching saw it on a paper both sources know:

- "one person on a paper, two records (one per source)": Semantic Scholar's id and OpenAlex's id
  for the same byline name of one paper, aligned by name with that name by each source's own
  author list, are held by two records (each made earlier from a paper only one source knew);
- "one ORCID across several records": OpenAlex gives the ORCID held by one record to the author
  of a byline slot linked to another record.

Only when nothing speaks against it: the byline slot was paired with certainty (its match
confidence is not uncertain), neither record would end up with two ids of one source, the merge
preview has no warning (different ORCIDs, both records on one paper) and no blocker (marked not
the same person, two verified owners), and no curator has split a merge of these two records
before (a split is a curator's decision that the rule must not undo).

**Proposed** (`same_person_proposals`, nothing written): live records whose names are
variants of one another (the same name key, which folds accents, "Tomáš"/"Tomas"; or initials,
"G. Skantze"/"Gabriel Skantze", by `researchers.names.name_match`) that share co-authors (one
record, or two records whose names are variants: the sources split co-authors as they split the
pair), with the curators' queue's evidence for and against the pair. Names and co-authors are not
proof: `benchmarks/identities.py` measures such merges against the recordings' own person sets
and they stay the curators' decision (docs/matching-and-curation.md, "One person, one record").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

from django.db.models import Q

from papers.models import Authorship

from ..models import (
    CurationEntry,
    DistinctPair,
    IdentityConflict,
    Researcher,
    ResearcherExternalId,
)
from ..names import name_key as make_name_key
from ..names import name_match, parse_name
from .decisions import CurationError, merge_plan, researchers_merge
from .queue import PairEvidence, _pair_evidence, _signals

# The conflicts that are the sources' ids on one byline slot, proof of one person.
PROOF_KINDS = (IdentityConflict.UNLINKED, IdentityConflict.ORCID)
# Open conflicts read per run: they are few (one per disagreement ever seen), and a rerun takes
# the rest.
BATCH = 500
# How alike two names must be (researchers.names.name_match) to be offered as variants.
VARIANT_SCORE = 0.9
NOTE_PREFIX = "Merged by the identity rule (one person, one record): "


@dataclass
class SamePersonPair:
    """Two live records the sources' ids tie on a byline slot, and how."""

    low: int
    high: int
    evidence: list[str] = field(default_factory=list)
    conflict_ids: list[int] = field(default_factory=list)
    slots: list[tuple[int, int]] = field(default_factory=list)  # (paper id, position)


@dataclass
class SamePersonOutcome:
    merged: list[dict] = field(default_factory=list)  # entry, survivor, folded, note
    left: list[dict] = field(default_factory=list)  # pair, why not merged, evidence

    def as_dict(self) -> dict:
        return {"merged": self.merged, "left_to_curators": self.left}


def _live(ids: set[int]) -> dict[int, int]:
    """Each record's live record (merges keep chains one hop long)."""
    out = {}
    for pk, merged_into in Researcher.objects.filter(pk__in=ids).values_list("pk", "merged_into"):
        out[pk] = merged_into or pk
    return out


def _describe(conflict: IdentityConflict, arxiv_id: str) -> str:
    where = f"arXiv:{arxiv_id} byline #{conflict.position} \u201c{conflict.name_as_written}\u201d"
    if conflict.kind == IdentityConflict.ORCID:
        return (
            f"{where}: OpenAlex gives ORCID {conflict.orcid} (held by record "
            f"{conflict.other_researcher_id}) to the author Semantic Scholar gives id "
            f"{conflict.s2_id or '-'} and OpenAlex id {conflict.openalex_id or '-'} (record "
            f"{conflict.researcher_id})"
        )
    return (
        f"{where}: Semantic Scholar's id {conflict.s2_id} (record {conflict.researcher_id}) and "
        f"OpenAlex's id {conflict.openalex_id} (record {conflict.other_researcher_id}) name the "
        "same byline name"
    )


def same_person_pairs(
    *, after: int = 0, limit: int = BATCH
) -> tuple[list[SamePersonPair], int | None]:
    """The pairs of live records that open proof conflicts tie, from the `limit` conflicts after
    pk `after` in pk order, and the last conflict read (None: none was left)."""
    conflicts = list(
        IdentityConflict.objects.filter(
            kind__in=PROOF_KINDS,
            status=IdentityConflict.OPEN,
            other_researcher__isnull=False,
            pk__gt=after,
        )
        .select_related("paper")
        .order_by("pk")[:limit]
    )
    live = _live(
        {c.researcher_id for c in conflicts} | {c.other_researcher_id or 0 for c in conflicts}
    )
    pairs: dict[tuple[int, int], SamePersonPair] = {}
    for c in conflicts:
        a, b = live.get(c.researcher_id), live.get(c.other_researcher_id or 0)
        if a is None or b is None or a == b:
            continue
        low, high = sorted((a, b))
        pair = pairs.setdefault((low, high), SamePersonPair(low, high))
        pair.evidence.append(_describe(c, c.paper.arxiv_id if c.paper else "?"))
        pair.conflict_ids.append(c.pk)
        if c.paper_id is not None and c.position is not None:
            pair.slots.append((c.paper_id, c.position))
    return list(pairs.values()), (conflicts[-1].pk if conflicts else None)


def _why_not(pair: SamePersonPair) -> list[str]:
    """What speaks against merging this pair automatically (empty: merge it)."""
    reasons = []
    split_before = (
        CurationEntry.objects.filter(
            action=CurationEntry.MERGE, undone_by__isnull=False, researchers=pair.low
        )
        .filter(researchers=pair.high)
        .exists()
    )
    if split_before:
        reasons.append("a curator split a merge of these records before")
    if DistinctPair.objects.filter(low_id=pair.low, high_id=pair.high).exists():
        reasons.append("the curators marked them as not the same person")
    slot_q = Q()
    for paper_id, position in pair.slots:
        slot_q |= Q(paper_id=paper_id, position=position)
    if pair.slots:
        uncertain = [
            a
            for a in Authorship.objects.filter(slot_q).only("match_confidence")
            if a.match_uncertain
        ]
        if uncertain:
            reasons.append("the byline slot was paired with the sources' names uncertainly")
    held: dict[str, set[int]] = defaultdict(set)
    for rid, source in ResearcherExternalId.objects.filter(
        researcher_id__in=[pair.low, pair.high]
    ).values_list("researcher_id", "source"):
        held[source].add(rid)
    for source, label in ResearcherExternalId.SOURCES:
        if len(held[source]) > 1:
            reasons.append(f"both records hold a {label} id")
    if not reasons:
        plan = merge_plan(survivor_id=pair.low, folded_ids=[pair.high])
        reasons += plan.blockers + plan.conflicts
    return reasons


def _survivor(low: int, high: int) -> tuple[int, int]:
    """The record with more papers survives (the lower id on a tie): fewer links move."""
    counts = dict(Researcher.objects.filter(pk__in=[low, high]).values_list("pk", "paper_count"))
    survivor = high if counts.get(high, 0) > counts.get(low, 0) else low
    return survivor, (low if survivor == high else high)


def same_person_merge(*, limit: int = BATCH) -> SamePersonOutcome:
    """Merge the records the sources' ids prove to be one person; list the ones left alone.

    Each merge is `researchers_merge` with no actor and a note giving the evidence (one
    CurationEntry each, undone by a split). Idempotent: a merge resolves its conflicts, so a
    rerun finds nothing more to do; a pair left alone stays open for the curators, and a pair a
    curator split stays split.
    """
    outcome = SamePersonOutcome()
    last: int | None = 0
    while last is not None:
        pairs, last = same_person_pairs(after=last, limit=limit)
        for pair in pairs:
            _merge_or_leave(pair, outcome)
    return outcome


def _merge_or_leave(pair: SamePersonPair, outcome: SamePersonOutcome) -> None:
    # An earlier merge of this run may have folded one of the two: the pair is its survivor's.
    live = _live({pair.low, pair.high})
    low, high = sorted((live.get(pair.low, pair.low), live.get(pair.high, pair.high)))
    if low == high:
        return
    pair.low, pair.high = low, high
    reasons = _why_not(pair)
    if not reasons:
        survivor, folded = _survivor(pair.low, pair.high)
        note = NOTE_PREFIX + "; ".join(pair.evidence)
        try:
            entry = researchers_merge(
                survivor_id=survivor, folded_ids=[folded], actor=None, note=note
            )
        except CurationError as exc:  # a concurrent curator's decision got there first
            reasons = [str(exc)]
        else:
            outcome.merged.append(
                {"entry": entry.pk, "survivor": survivor, "folded": folded, "note": note}
            )
            return
    outcome.left.append(
        {"pair": [pair.low, pair.high], "why_not": reasons, "evidence": pair.evidence}
    )


@dataclass
class Proposal:
    """Two live records whose names are variants and that share co-authors."""

    low: Researcher
    high: Researcher
    evidence: PairEvidence
    names: str  # how the names agree (same name key, initials, …)
    # The co-authors in common: one record ("Jeffrey Dean"), or two records whose names are
    # variants ("G. Corrado ~ Greg S. Corrado"): the sources split co-authors as they split
    # the pair itself, one record per source.
    coauthors: list[str] = field(default_factory=list)


def _variants(a: str, b: str) -> str | None:
    """How two names agree enough to be offered as one person's (None: they do not)."""
    if make_name_key(a) and make_name_key(a) == make_name_key(b):
        return "same name key"
    pa, pb = parse_name(a), parse_name(b)
    if not pa.family or pa.family != pb.family:
        return None
    score, how = name_match(a, b)
    return how if score >= VARIANT_SCORE else None


def _shared_coauthors(x: Researcher, y: Researcher) -> list[str]:
    """The co-authors of both (stored page figures, no query): the same record, or records
    whose names are variants."""
    pair = {x.pk, y.pk}
    co_x = {c["id"]: c.get("name", "") for c in x.coauthors if c.get("id") not in (None, *pair)}
    co_y = {c["id"]: c.get("name", "") for c in y.coauthors if c.get("id") not in (None, *pair)}
    shared = [co_x[pk] for pk in sorted(co_x.keys() & co_y.keys())]
    by_family: dict[tuple[str, ...], list[tuple[int, str]]] = defaultdict(list)
    for pk, name in co_y.items():
        if pk not in co_x:
            by_family[parse_name(name).family].append((pk, name))
    used: set[int] = set()  # each of y's co-authors pairs with one of x's at most
    for pk, name in sorted(co_x.items()):
        if pk in co_y:
            continue
        family = parse_name(name).family
        for other, other_name in by_family.get(family, []) if family else []:
            if other not in used and _variants(name, other_name):
                used.add(other)
                shared.append(f"{name} ~ {other_name}")
                break
    return shared


def same_person_proposals(
    *, researcher_ids: list[int] | None = None, min_coauthors: int = 1
) -> list[Proposal]:
    """Name variants among these live records (all live person records when None) that share
    at least `min_coauthors` co-authors (a record, or two records with variant names), with
    the queue's evidence; pairs marked "not the same person", or with evidence against them
    (different ORCIDs, both on one paper), are left out. Nothing is written: the curators
    decide.

    Candidates are grouped by family name (folded) and first initial, so the pairs compared are
    only the plausible ones; a fixed number of queries for the records read.
    """
    records = Researcher.objects.filter(merged_into__isnull=True, is_person=True)
    if researcher_ids is not None:
        records = records.filter(pk__in=researcher_ids)
    groups: dict[tuple[str, str], list[Researcher]] = defaultdict(list)
    for record in records.order_by("pk"):
        parsed = parse_name(record.display_name)
        if parsed.family and parsed.given and parsed.given[0]:
            groups[(parsed.family[-1], parsed.given[0][:1])].append(record)
    candidates: list[tuple[Researcher, Researcher, str, list[str]]] = []
    for group in groups.values():
        for x, y in combinations(group, 2):
            how = _variants(x.display_name, y.display_name)
            if not how:
                continue
            shared = _shared_coauthors(x, y)
            if len(shared) >= min_coauthors:
                candidates.append((x, y, how, shared))
    if not candidates:
        return []
    sig = _signals(sorted({r.pk for x, y, _, _ in candidates for r in (x, y)}))
    out = []
    for x, y, how, shared in candidates:
        if (min(x.pk, y.pk), max(x.pk, y.pk)) in sig.distinct:
            continue
        evidence = _pair_evidence(x, y, sig)
        if evidence.evidence_against():
            continue
        low, high = (x, y) if x.pk < y.pk else (y, x)
        out.append(Proposal(low=low, high=high, evidence=evidence, names=how, coauthors=shared))
    out.sort(key=lambda p: (-len(p.coauthors), -p.evidence.score, p.low.pk, p.high.pk))
    return out
