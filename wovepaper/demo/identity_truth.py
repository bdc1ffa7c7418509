"""Who is one person, according to the recorded answers themselves (not our matching): the
reference `benchmarks/identities.py` measures researcher records against.

Each source id is taken as the source says: one Semantic Scholar author id, one OpenAlex
author id, one person each. Ids are then joined into one person only by what a recorded answer
states:

1. **ORCID (OpenAlex)**: an OpenAlex authorship or author record gives the OpenAlex author id an
   ORCID iD. Two ids with the same iD are one person: ORCID is the person's own registry.
2. **ORCID and DBLP (Semantic Scholar)**: a Semantic Scholar author record's `externalIds`
   (`ORCID`; `DBLP`, whose keys are DBLP's disambiguated person names, "Abhijit Banerjee 0001").
3. **The same byline slot in both sources**: a paper both sources recorded (the same arXiv id),
   whose two author lists have the same length, gives at the same position a Semantic Scholar
   id and an OpenAlex id whose printed names agree (the same family name, folded, and the same
   first given name or its initial: "Noam M. Shazeer" / "Shazeer, Noam"). Each source says its
   id wrote that slot of that paper, so both name one person. No alignment is run: slots that
   differ in count or name are left out rather than guessed.

Nothing else joins ids: names alone, co-authors, fields or institutions never do. So two ids the
recordings do not tie count as two people even when they are one (Ilya Sutskever's Semantic
Scholar and OpenAlex ids, which no recorded paper or iD links): the reference is what the
recordings prove, and a merge they do not prove scores as a loss of precision.

An id is *labelled* when its person carries something beyond the id itself (an ORCID iD, a DBLP
key, or a second source's id by rule 3); the others are left out of the measure, since the
recordings say nothing about who else they might be.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from papers.ingest.records import normalize_arxiv_id
from researchers.names import parse_name
from sources.openalex import clean_raw_author_name, work_arxiv_id

from .replay import Recordings

S2 = "s2"
OPENALEX = "openalex"


def _oa_id(url: str | None) -> str:
    return (url or "").rstrip("/").rsplit("/", 1)[-1]


def _orcid(url: str | None) -> str:
    return (url or "").rstrip("/").rsplit("/", 1)[-1]


def names_agree(a: str, b: str) -> bool:
    """The same folded family name and the same first given name, or its initial."""
    pa, pb = parse_name(a), parse_name(b)
    if not pa.family or pa.family != pb.family or not pa.given or not pb.given:
        return False
    ga, gb = pa.given[0], pb.given[0]
    return ga == gb or (min(len(ga), len(gb)) == 1 and ga[0] == gb[0])


@dataclass
class IdentityTruth:
    """Source ids ("s2:1701686", "openalex:A5006446297") grouped into the recordings' people."""

    parent: dict[str, str] = field(default_factory=dict)
    # Why ids were joined: (node, node, rule, where) for each statement read.
    links: list[tuple[str, str, str, str]] = field(default_factory=list)

    def _find(self, node: str) -> str:
        self.parent.setdefault(node, node)
        while self.parent[node] != node:
            self.parent[node] = self.parent[self.parent[node]]
            node = self.parent[node]
        return node

    def add(self, node: str) -> None:
        self._find(node)

    def join(self, a: str, b: str, rule: str, where: str) -> None:
        self.links.append((a, b, rule, where))
        ra, rb = self._find(a), self._find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def person(self, node: str) -> str:
        return self._find(node)

    def people(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for node in list(self.parent):
            out[self._find(node)].add(node)
        return out

    def source_ids(self) -> set[str]:
        return {n for n in self.parent if n.startswith((f"{S2}:", f"{OPENALEX}:"))}

    def labelled(self) -> set[str]:
        """Source ids whose person holds an ORCID, a DBLP key or ids of both sources."""
        out = set()
        for nodes in self.people().values():
            sources = {n.split(":", 1)[0] for n in nodes}
            if sources & {"orcid", "dblp"} or {S2, OPENALEX} <= sources:
                out |= {n for n in nodes if n.split(":", 1)[0] in (S2, OPENALEX)}
        return out

    def rule_counts(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for _, _, rule, _ in self.links:
            counts[rule] += 1
        return dict(counts)


def _openalex_orcids(truth: IdentityTruth, recordings: Recordings) -> dict[str, dict]:
    """Rule 1; returns the OpenAlex works by arXiv id, for rule 3."""
    by_arxiv: dict[str, dict] = {}
    for work in recordings.openalex_works:
        answer = work["answer"]
        arxiv = work_arxiv_id(answer)
        if arxiv:
            by_arxiv.setdefault(normalize_arxiv_id(arxiv), answer)
        for slot in answer.get("authorships") or []:
            author = slot.get("author") or {}
            oa = _oa_id(author.get("id"))
            if oa:
                truth.add(f"{OPENALEX}:{oa}")
            if oa and author.get("orcid"):
                truth.join(
                    f"{OPENALEX}:{oa}",
                    f"orcid:{_orcid(author['orcid'])}",
                    "ORCID on an OpenAlex authorship",
                    answer.get("id", ""),
                )
    for key, record in recordings.openalex_authors.items():
        answer = record["answer"]
        oa = _oa_id(answer.get("id")) or key
        truth.add(f"{OPENALEX}:{oa}")
        if answer.get("orcid"):
            truth.join(
                f"{OPENALEX}:{oa}",
                f"orcid:{_orcid(answer['orcid'])}",
                "ORCID on an OpenAlex author record",
                oa,
            )
    return by_arxiv


def _s2_external_ids(truth: IdentityTruth, recordings: Recordings) -> None:
    """Rule 2."""
    for key, record in recordings.s2_authors.items():
        answer = record["answer"]
        s2 = str(answer.get("authorId") or key)
        truth.add(f"{S2}:{s2}")
        external = answer.get("externalIds") or {}
        orcid = external.get("ORCID")
        if isinstance(orcid, str) and orcid:
            truth.join(f"{S2}:{s2}", f"orcid:{orcid}", "ORCID on a Semantic Scholar author", s2)
        dblp = external.get("DBLP") or []
        for name in [dblp] if isinstance(dblp, str) else dblp:
            truth.join(f"{S2}:{s2}", f"dblp:{name}", "DBLP key on a Semantic Scholar author", s2)


def _same_slots(truth: IdentityTruth, recordings: Recordings, oa_by_arxiv: dict[str, dict]) -> None:
    """Rule 3."""
    for arxiv, record in recordings.s2_papers.items():
        authors = record["answer"].get("authors") or []
        for author in authors:
            if author.get("authorId"):
                truth.add(f"{S2}:{author['authorId']}")
        slots = (oa_by_arxiv.get(normalize_arxiv_id(arxiv)) or {}).get("authorships") or []
        if len(slots) != len(authors):
            continue
        for position, (author, slot) in enumerate(zip(authors, slots, strict=True), start=1):
            oa = _oa_id((slot.get("author") or {}).get("id"))
            printed = clean_raw_author_name(slot.get("raw_author_name")) or ""
            if author.get("authorId") and oa and names_agree(author.get("name") or "", printed):
                truth.join(
                    f"{S2}:{author['authorId']}",
                    f"{OPENALEX}:{oa}",
                    "same byline slot in both sources",
                    f"arXiv:{arxiv} #{position}",
                )


def identity_truth(recordings: Recordings) -> IdentityTruth:
    """The people the recorded answers establish (rules in the module's docstring)."""
    truth = IdentityTruth()
    oa_by_arxiv = _openalex_orcids(truth, recordings)
    _s2_external_ids(truth, recordings)
    _same_slots(truth, recordings, oa_by_arxiv)
    return truth
