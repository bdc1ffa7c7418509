"""The align flow: pair each byline position with what the sources say about its author."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from papers.models import Authorship
from sources.openalex import OAAuthorship, OAWork
from sources.semantic_scholar import S2Author, S2Paper

from ..author_list_alignment import Link, align_links, lists_disagree
from ..names import best_display_name
from .fetch import Found


@dataclass
class AuthorKeys:
    """What the sources say about the author at one byline position."""

    authorship: Authorship
    s2: S2Author | None = None
    openalex: OAAuthorship | None = None
    # How each source's author was paired with the byline name, and how surely.
    s2_link: Link | None = None
    openalex_link: Link | None = None

    @property
    def link(self) -> Link | None:
        """The surer of the two pairings: where both sources agree, the better-spelt one."""
        links = [k for k in (self.s2_link, self.openalex_link) if k is not None]
        return max(links, key=lambda k: k.confidence) if links else None

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
        for key, link in zip(
            keys, align_links(byline, [[a.name] for a in s2.authors]), strict=True
        ):
            if link is not None and s2.authors[link.index].author_id:
                key.s2, key.s2_link = s2.authors[link.index], link
    if work is not None and work.authorships:
        spellings = [ship.identity_spellings for ship in work.authorships]
        for key, link in zip(keys, align_links(byline, spellings), strict=True):
            if link is not None and work.authorships[link.index].author_id:
                key.openalex, key.openalex_link = work.authorships[link.index], link
    return keys


def screen_sources(
    papers: Sequence, found: Found, bylines: dict[int, list[Authorship]]
) -> tuple[Found, dict[int, dict[str, str]]]:
    """Set aside the source records whose author list cannot be the paper's (pure).

    Returns what the sources said with those records removed (so none of their ids are used),
    and, by paper id, each set-aside source with the reason, for the curators.
    """
    s2, openalex = dict(found.s2), dict(found.openalex)
    mismatches: dict[int, dict[str, str]] = {}
    for paper in papers:
        byline = [a.name for a in bylines.get(paper.pk, [])]
        if not byline:
            continue
        record = s2.get(paper.arxiv_id)
        if record is not None and lists_disagree(byline, len(record.authors)):
            mismatches.setdefault(paper.pk, {})["s2"] = (
                f"Semantic Scholar {record.paper_id} lists {len(record.authors)} authors, "
                f"the byline {len(byline)}"
            )
            s2[paper.arxiv_id] = None
        work = openalex.get(paper.arxiv_id)
        if work is not None and lists_disagree(
            byline, len(work.authorships), truncated=work.authors_truncated
        ):
            mismatches.setdefault(paper.pk, {})["openalex"] = (
                f"OpenAlex {work.work_id} lists {len(work.authorships)} authors, "
                f"the byline {len(byline)}"
            )
            openalex[paper.arxiv_id] = None
    return Found(s2=s2, openalex=openalex), mismatches
