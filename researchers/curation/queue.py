"""The curators' review queue: live records sharing a name key, ranked by the evidence that they
are one person.

Evidence for: shared co-authors and overlapping fields (both read from the stored page figures,
no query per record), shared institutions, overlapping active years, identity conflicts that
link the two records (the sources disagreeing about one person). Evidence against: different
ORCIDs, both records on the same paper, and a "not the same person" decision (such a pair is not
suggested at all).

The whole archive is never ranked at once: a page takes a bounded window of candidate names
(those with open identity conflicts first, then the names of the most prolific records that other
live records share; or the names starting with a search prefix) and ranks the clusters in that
window with a fixed number of queries.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

from django.db.models import Count, Max, Min

from institutions.models import AuthorshipInstitution
from papers.models import Authorship

from ..models import (
    CurationEntry,
    DistinctPair,
    IdentityConflict,
    Researcher,
    ResearcherExternalId,
)
from ..names import name_key as make_name_key

MAX_CLUSTER = 8  # records shown per name; a name with more is shown with its 8 largest
WINDOW = 60  # candidate names ranked per page

WEIGHTS = {
    "conflicts": 4,
    "owner_proposed": 3,
    "coauthors": 2,
    "institutions": 2,
    "fields": 1,
    "years": 1,
    "orcid_differs": -8,
    "same_paper": -4,
}


@dataclass
class PairEvidence:
    a: int
    b: int
    conflicts: int = 0
    conflict_kinds: list[str] = field(default_factory=list)
    coauthors: list[str] = field(default_factory=list)
    institutions: list[str] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    years_overlap: bool = False
    orcid_differs: bool = False
    same_paper: int = 0
    # The verified owner of one of the two pages says they are the same person.
    owner_proposed: bool = False

    @property
    def score(self) -> int:
        return (
            WEIGHTS["conflicts"] * min(self.conflicts, 3)
            + WEIGHTS["owner_proposed"] * int(self.owner_proposed)
            + WEIGHTS["coauthors"] * min(len(self.coauthors), 5)
            + WEIGHTS["institutions"] * min(len(self.institutions), 3)
            + WEIGHTS["fields"] * min(len(self.fields), 3)
            + WEIGHTS["years"] * int(self.years_overlap)
            + WEIGHTS["orcid_differs"] * int(self.orcid_differs)
            + WEIGHTS["same_paper"] * min(self.same_paper, 2)
        )

    def evidence_for(self) -> list[str]:
        out = []
        if self.owner_proposed:
            out.append(
                "the researcher who verified one of these pages as theirs proposed merging them"
            )
        if self.conflicts:
            out.append(
                f"{self.conflicts} identity conflict(s) between the sources link them: "
                + "; ".join(self.conflict_kinds)
            )
        if self.coauthors:
            out.append("shared co-authors: " + ", ".join(self.coauthors[:5]))
        if self.institutions:
            out.append("shared institutions: " + ", ".join(self.institutions[:3]))
        if self.fields:
            out.append("overlapping fields: " + ", ".join(self.fields[:5]))
        if self.years_overlap:
            out.append("overlapping years")
        return out

    def evidence_against(self) -> list[str]:
        out = []
        if self.orcid_differs:
            out.append("different ORCIDs")
        if self.same_paper:
            out.append(f"both are authors of {self.same_paper} same paper(s)")
        return out


@dataclass
class Cluster:
    name_key: str
    records: list[Researcher]
    pairs: list[PairEvidence]
    total: int  # live records with this name (may exceed the ones shown)

    @property
    def score(self) -> int:
        return max((p.score for p in self.pairs), default=0)


def _candidate_keys(*, prefix: str, limit: int) -> list[str]:
    live = Researcher.objects.filter(merged_into__isnull=True, is_person=True).exclude(name_key="")
    if prefix:
        key = make_name_key(prefix)
        rows = (
            live.filter(name_key__startswith=key)
            .values("name_key")
            .annotate(n=Count("pk"))
            .filter(n__gt=1)
            .order_by("name_key")[:limit]
        )
        return [r["name_key"] for r in rows]
    keys: list[str] = []
    # Open conflicts are the sources telling us two records may be one person: first in line.
    for key in (
        IdentityConflict.objects.filter(
            status=IdentityConflict.OPEN, other_researcher__isnull=False
        )
        .order_by("-created_at")
        .values_list("researcher__name_key", flat=True)[: limit * 4]
    ):
        if key and key not in keys:
            keys.append(key)
    keys = keys[: limit // 2]
    if len(keys) < limit:
        # The most prolific live records (an index scan of the paper-count index), then which of
        # their names other live records share: bounded work, unlike grouping the whole table.
        top = list(
            dict.fromkeys(
                live.order_by("-paper_count", "pk").values_list("name_key", flat=True)[: limit * 10]
            )
        )
        shared = set(
            live.filter(name_key__in=top)
            .values("name_key")
            .annotate(n=Count("pk"))
            .filter(n__gt=1)
            .values_list("name_key", flat=True)
        )
        keys.extend(k for k in top if k in shared and k not in keys)
    return keys[:limit]


@dataclass
class _Facts:
    """What describes each record of a set (sources, years, institutions): three queries."""

    orcids: dict[int, set[str]]
    external: dict[int, list[str]]
    years: dict[int, tuple]
    institutions: dict[int, dict[int, str]]


@dataclass
class _Signals(_Facts):
    """What the evidence is read from, for one set of records: the facts and what relates two
    of them, a fixed number of queries."""

    distinct: set[tuple[int, int]]
    conflicts: dict[tuple[int, int], int]
    conflict_kinds: dict[tuple[int, int], set[str]]
    same_paper: dict[tuple[int, int], int]
    owner_proposed: set[tuple[int, int]] = field(default_factory=set)


def _facts(ids: list[int]) -> _Facts:
    orcids: dict[int, set[str]] = defaultdict(set)
    external: dict[int, list[str]] = defaultdict(list)
    for rid, source, value in (
        ResearcherExternalId.objects.filter(researcher_id__in=ids)
        .order_by("source", "value")
        .values_list("researcher_id", "source", "value")
    ):
        external[rid].append(f"{source}:{value}")
        if source == ResearcherExternalId.ORCID:
            orcids[rid].add(value)
    years = {
        row["researcher_id"]: (row["first"], row["last"])
        for row in (
            Authorship.objects.filter(researcher_id__in=ids)
            .values("researcher_id")
            .annotate(first=Min("paper__published"), last=Max("paper__published"))
        )
    }
    institutions: dict[int, dict[int, str]] = defaultdict(dict)
    for rid, inst, name in (
        AuthorshipInstitution.objects.filter(authorship__researcher_id__in=ids)
        .values_list("authorship__researcher_id", "institution_id", "institution__name")
        .distinct()
    ):
        institutions[rid][inst] = name
    return _Facts(orcids, external, years, institutions)


def _signals(ids: list[int], *, owned: list[int] | None = None) -> _Signals:
    """`owned`: the records among `ids` verified as their researcher's own page, the only ones
    whose owner can have proposed a merge (none: that query is not run)."""
    facts = _facts(ids)
    distinct = set(DistinctPair.objects.filter(low_id__in=ids).values_list("low_id", "high_id"))
    conflicts: dict[tuple[int, int], int] = defaultdict(int)
    conflict_kinds: dict[tuple[int, int], set[str]] = defaultdict(set)
    kind_labels = dict(IdentityConflict.KINDS)
    # Shared ORCIDs and external ids show up here: an id belongs to one record (a unique
    # constraint), so matching records "one ORCID across several records" instead.
    for a, b, kind in IdentityConflict.objects.filter(
        researcher_id__in=ids, other_researcher_id__in=ids
    ).values_list("researcher_id", "other_researcher_id", "kind"):
        pair = (min(a, b), max(a, b))
        conflicts[pair] += 1
        conflict_kinds[pair].add(kind_labels.get(kind, kind))
    same_paper: dict[tuple[int, int], int] = defaultdict(int)
    for a, b, n in (
        Authorship.objects.filter(researcher_id__in=ids, paper__authorships__researcher_id__in=ids)
        .values_list("researcher_id", "paper__authorships__researcher_id")
        .annotate(n=Count("paper_id", distinct=True))
    ):
        if a < b:
            same_paper[(a, b)] = n
    owner_proposed: set[tuple[int, int]] = set()
    if owned:
        for rid, after in CurationEntry.objects.filter(
            action=CurationEntry.OWNER_PROPOSED, researcher_id__in=owned
        ).values_list("researcher_id", "after"):
            for other in (after or {}).get("others", []):
                owner_proposed.add((min(rid, other), max(rid, other)))
    return _Signals(
        owner_proposed=owner_proposed,
        orcids=facts.orcids,
        external=facts.external,
        years=facts.years,
        institutions=facts.institutions,
        distinct=distinct,
        conflicts=conflicts,
        conflict_kinds=conflict_kinds,
        same_paper=same_paper,
    )


def _pair_evidence(x: Researcher, y: Researcher, sig: _Signals) -> PairEvidence:
    low, high = (x, y) if x.pk < y.pk else (y, x)
    pair = (low.pk, high.pk)
    ev = PairEvidence(
        a=low.pk,
        b=high.pk,
        conflicts=sig.conflicts.get(pair, 0),
        conflict_kinds=sorted(sig.conflict_kinds.get(pair, ())),
        same_paper=sig.same_paper.get(pair, 0),
        owner_proposed=pair in sig.owner_proposed,
    )
    co_x = {c.get("id"): c.get("name", "") for c in low.coauthors if c.get("id")}
    co_y = {c.get("id") for c in high.coauthors if c.get("id")}
    ev.coauthors = sorted(co_x[c] for c in co_x.keys() & co_y if c not in pair)
    ev.fields = sorted(set(low.field_counts or {}) & set(high.field_counts or {}))
    shared = sig.institutions[low.pk].keys() & sig.institutions[high.pk].keys()
    ev.institutions = sorted(sig.institutions[low.pk][i] for i in shared)
    ev.orcid_differs = bool(
        sig.orcids[low.pk] and sig.orcids[high.pk] and not sig.orcids[low.pk] & sig.orcids[high.pk]
    )
    span_x, span_y = sig.years.get(low.pk), sig.years.get(high.pk)
    if span_x and span_y and all(span_x) and all(span_y):
        (fx, lx), (fy, ly) = span_x, span_y
        ev.years_overlap = fx.year <= ly.year and fy.year <= lx.year
    return ev


def _years(span: tuple | None) -> str:
    if not span or not all(span):
        return ""
    first, last = f"{span[0]:%Y}", f"{span[1]:%Y}"
    return first if first == last else f"{first}–{last}"


def _describe(record: Researcher, sig: _Facts) -> None:
    """The per-record facts shown beside the evidence (attributes, so templates only read)."""
    span = sig.years.get(record.pk)
    by_count = sorted((record.field_counts or {}).items(), key=lambda kv: (-kv[1], kv[0]))
    labels = dict(ResearcherExternalId.SOURCES)
    external = sig.external.get(record.pk, [])
    facts = {
        "curation_external": external,
        "curation_sources": sorted({labels.get(e.split(":", 1)[0], "") for e in external} - {""}),
        "curation_years": _years(span),
        "curation_institutions": sorted(sig.institutions[record.pk].values())[:5],
        "curation_fields": [code for code, _ in by_count[:5]],
    }
    for name, value in facts.items():
        setattr(record, name, value)


def researchers_told_apart(records: list[Researcher]) -> list[Researcher]:
    """The records with the facts that tell same-name records apart, as the same-name panel
    shows them (sources, years, institutions, fields): a fixed number of queries for the
    bounded list given."""
    if records:
        facts = _facts([r.pk for r in records])
        for record in records:
            _describe(record, facts)
    return records


@dataclass
class SameNameExplained:
    record: Researcher
    evidence: PairEvidence
    verdict: str  # "distinct" (curated as different people) or "undecided"


def same_name_explained(
    researcher: Researcher, others: list[Researcher]
) -> list[SameNameExplained]:
    """Why each same-name record looks like another person or the same one, for the public
    researcher page: the queue's evidence for the pair (researcher, other) and the verdict so
    far. A fixed number of queries whatever the number of homonyms (`others` is bounded)."""
    if not others:
        return []
    records = [researcher, *others]
    sig = _signals([r.pk for r in records], owned=[r.pk for r in records if r.verified_by])
    _describe(researcher, sig)
    out = []
    for other in others:
        _describe(other, sig)
        pair = (min(researcher.pk, other.pk), max(researcher.pk, other.pk))
        verdict = "distinct" if pair in sig.distinct else "undecided"
        out.append(SameNameExplained(other, _pair_evidence(researcher, other, sig), verdict))
    return out


def proposal_candidates(*, prefix: str = "", limit: int = WINDOW * 10) -> list[int]:
    """The live records whose name variants the queue compares (`same_person.
    same_person_proposals`): those whose name key starts with the prefix, else the most
    prolific ones; an index range either way, never the whole table."""
    live = Researcher.objects.filter(merged_into__isnull=True, is_person=True)
    if prefix:
        live = live.filter(name_key__startswith=make_name_key(prefix))
    return list(live.order_by("-paper_count", "pk").values_list("pk", flat=True)[:limit])


def curation_clusters(*, prefix: str = "", limit: int = 20) -> list[Cluster]:
    """Same-name clusters with at least one pair still to decide, best evidence first.

    A fixed number of queries whatever the archive size (about ten).
    """
    keys = _candidate_keys(prefix=prefix, limit=WINDOW)
    if not keys:
        return []
    by_key: dict[str, list[Researcher]] = defaultdict(list)
    for record in Researcher.objects.filter(
        name_key__in=keys, merged_into__isnull=True, is_person=True
    ).order_by("name_key", "-paper_count", "pk"):
        by_key[record.name_key].append(record)
    totals = {k: len(v) for k, v in by_key.items()}
    shown = {k: v[:MAX_CLUSTER] for k, v in by_key.items() if len(v) > 1}
    ids = [r.pk for records in shown.values() for r in records]
    if not ids:
        return []
    owned = [r.pk for records in shown.values() for r in records if r.verified_by]
    sig = _signals(ids, owned=owned)
    clusters = []
    for key, records in shown.items():
        pairs = [
            _pair_evidence(x, y, sig)
            for x, y in combinations(sorted(records, key=lambda r: r.pk), 2)
            if (x.pk, y.pk) not in sig.distinct
        ]
        if not pairs:
            continue
        pairs.sort(key=lambda p: (-p.score, p.a, p.b))
        for record in records:
            _describe(record, sig)
        clusters.append(Cluster(name_key=key, records=records, pairs=pairs, total=totals[key]))
    clusters.sort(key=lambda c: (-c.score, c.name_key))
    return clusters[:limit]
