"""The align flow: pair each byline position with what the sources say about its author."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from papers.models import Authorship

from ..alignment import align_authors
from ..clients.openalex import OAAuthorship, OAWork
from ..clients.semantic_scholar import S2Author, S2Paper
from ..names import best_display_name


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
