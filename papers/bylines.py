"""Short bylines for paper lists: the first few names, the page's own researcher in place with
their position ("312th of 702"), and how many more there are.

A collaboration paper has hundreds of authors; a list shows a handful of names per paper and
the paper page keeps the whole byline. Only the names a list shows are read from the database
(papers.selectors.papers_with_short_bylines).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

# Bylines up to this long are shown whole; longer ones show their first BYLINE_HEAD names.
BYLINE_FULL = 8
BYLINE_HEAD = 3


@dataclass(frozen=True)
class BylineName:
    name: str
    url: str
    position: int
    focus: bool
    after_gap: bool


# A list shows a byline that no name was read from as written, cut to this many characters.
WRITTEN_SHOWN = 200


@dataclass(frozen=True)
class Byline:
    names: list[BylineName]
    total: int
    # Where no name was read: the byline as written, its first WRITTEN_SHOWN characters and
    # one more (so that a cut shows as one).
    written: str = ""

    @property
    def more(self) -> int:
        return max(self.total - len(self.names), 0)

    @property
    def is_cut(self) -> bool:
        return self.total > len(self.names)


class BylineRow(NamedTuple):
    """What a list shows of one authorship: read as plain values, not model instances (a
    researcher row carries its co-author network, which a byline never shows)."""

    paper_id: int
    position: int
    name: str
    researcher_id: int | None
    researcher_url: str


def byline_short(
    authorships: Sequence[BylineRow],
    total: int,
    focus_ids: Iterable[int] = (),
    *,
    written: str = "",
) -> Byline:
    """The names to show for a byline of `total` names, from its authorships in position order
    (the first BYLINE_FULL and those of the focus researchers are enough); `written`, the
    byline as written where no name was read (Byline.written)."""
    focus = set(focus_ids)
    whole = total <= BYLINE_FULL
    names: list[BylineName] = []
    last = 0
    for a in authorships:
        is_focus = a.researcher_id is not None and a.researcher_id in focus
        if not (whole or a.position <= BYLINE_HEAD or is_focus):
            continue
        names.append(
            BylineName(
                name=a.name,
                url=a.researcher_url,
                position=a.position,
                focus=is_focus and not whole,
                after_gap=a.position > last + 1,
            )
        )
        last = a.position
    return Byline(names=names, total=max(total, last), written=written)
