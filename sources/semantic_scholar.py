"""Semantic Scholar Graph API: papers by arXiv id and authors by id, in batches.

Only the fields matching needs are requested. Parsing is in pure functions over the decoded
JSON, returning dataclasses; `SemanticScholarClient` is the only part that touches the network.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from django.conf import settings

from sources.citation_answers import (
    CitedWork,
    s2_citing_works,
    s2_reference_items,
    s2_references,
)
from wovepaper.lib.http import ServiceClient, ServiceError, only_set, parsed_answer

SERVICE = "Semantic Scholar"
PAPER_FIELDS = "externalIds,citationCount,authors"
AUTHOR_FIELDS = "name,externalIds,hIndex,citationCount,paperCount"
PAPER_BATCH_MAX = 500
# Each cited and citing work with the ids that resolve it to an archive paper, and what a list
# shows of a work outside the archive. S2 caps each list at 1,000 works in a batch answer.
CITATION_FIELDS = ",".join(
    [
        "referenceCount",
        "citationCount",
        *(
            f"{edge}.{f}"
            for edge in ("references", "citations")
            for f in ("paperId", "externalIds", "title", "year", "citationCount")
        ),
    ]
)
# Citation lists make answers large: fewer papers a request keep it under S2's 10 MB (a
# larger answer is refused, and then asked again in halves).
CITATION_BATCH_MAX = 100
AUTHOR_BATCH_MAX = 1000
# The references endpoint, the only one with influence, intents and citing sentences: the edge's
# fields and the cited paper's (as CITATION_FIELDS asks of the batch). Paged by `next`; S2 takes
# up to 1,000 a page. A paper's list is read to REFERENCES_MAX at most (no paper cites more in
# practice; the bound keeps one paper from costing unbounded requests).
REFERENCE_FIELDS = "contexts,intents,isInfluential,paperId,externalIds,title,year,citationCount"
REFERENCES_PAGE_SIZE = 1000
REFERENCES_MAX = 10_000


@dataclass(frozen=True, slots=True)
class S2Author:
    author_id: str | None  # S2 lists some authors without an id
    name: str


@dataclass(frozen=True, slots=True)
class S2Paper:
    paper_id: str
    arxiv_id: str | None
    citation_count: int | None
    authors: tuple[S2Author, ...] = ()


@dataclass(frozen=True, slots=True)
class S2CitationGraph:
    """What S2 lists of one paper's citations: the works it cites and (at most 1,000 of) the
    works citing it, with its own counts of both."""

    paper_id: str
    reference_count: int | None
    citation_count: int | None
    references: tuple[CitedWork, ...]
    citing: tuple[CitedWork, ...]


@dataclass(frozen=True, slots=True)
class S2References:
    """One paper's references as the references endpoint lists them (with influence, intents
    and contexts), the pages it took, and the items set aside as malformed (id, reason, the
    item as JSON)."""

    references: tuple[CitedWork, ...]
    set_aside: tuple[tuple[str, str, str], ...]
    pages: int


@dataclass(frozen=True, slots=True)
class S2AuthorRecord:
    author_id: str
    name: str
    h_index: int | None
    citation_count: int | None
    paper_count: int | None
    orcid: str | None = None
    dblp: tuple[str, ...] = field(default=())

    @property
    def works_count(self) -> int | None:
        """S2's paper count under OpenAlex's name, so figures read either source's record alike."""
        return self.paper_count


def _int_or_none(value) -> int | None:
    return value if isinstance(value, int) and value >= 0 else None


def parse_paper(data: dict | None) -> S2Paper | None:
    """One paper object of a batch answer; None stands for a paper S2 does not know."""
    if not data or not data.get("paperId"):
        return None
    external = data.get("externalIds") or {}
    return S2Paper(
        paper_id=data["paperId"],
        arxiv_id=external.get("ArXiv"),
        citation_count=_int_or_none(data.get("citationCount")),
        authors=tuple(
            S2Author(author_id=a.get("authorId") or None, name=(a.get("name") or "").strip())
            for a in data.get("authors") or []
        ),
    )


def parse_paper_batch(ids: Sequence[str], payload: list) -> dict[str, S2Paper | None]:
    """Map each requested id to its paper; the answer keeps the request's order, null if unknown."""
    if not isinstance(payload, list) or len(payload) != len(ids):
        raise ValueError(
            f"paper batch answered {type(payload).__name__} of "
            f"{len(payload) if isinstance(payload, list) else '?'} for {len(ids)} ids"
        )
    return {requested: parse_paper(item) for requested, item in zip(ids, payload, strict=True)}


def parse_citation_graph(data: dict | None) -> S2CitationGraph | None:
    """One paper object of a batch answer asked for CITATION_FIELDS; None: S2 does not know it."""
    if not data or not data.get("paperId"):
        return None
    return S2CitationGraph(
        paper_id=data["paperId"],
        reference_count=_int_or_none(data.get("referenceCount")),
        citation_count=_int_or_none(data.get("citationCount")),
        references=tuple(s2_references(data)),
        citing=tuple(s2_citing_works(data)),
    )


def parse_citation_batch(ids: Sequence[str], payload: list) -> dict[str, S2CitationGraph | None]:
    if not isinstance(payload, list) or len(payload) != len(ids):
        raise ValueError("paper batch answer does not match the request")
    return {k: parse_citation_graph(item) for k, item in zip(ids, payload, strict=True)}


def parse_author(data: dict | None) -> S2AuthorRecord | None:
    if not data or not data.get("authorId"):
        return None
    external = data.get("externalIds") or {}
    orcid = external.get("ORCID")
    dblp = external.get("DBLP")
    return S2AuthorRecord(
        author_id=str(data["authorId"]),
        name=(data.get("name") or "").strip(),
        h_index=_int_or_none(data.get("hIndex")),
        citation_count=_int_or_none(data.get("citationCount")),
        paper_count=_int_or_none(data.get("paperCount")),
        orcid=orcid if isinstance(orcid, str) and orcid else None,
        # DBLP comes as a list of names (and was a string in older answers).
        # A missing id is no name: `(dblp,)` of it made a tuple holding an empty tuple.
        dblp=tuple(dblp) if isinstance(dblp, list) else (dblp,) if isinstance(dblp, str) else (),
    )


def parse_author_batch(ids: Sequence[str], payload: list) -> dict[str, S2AuthorRecord | None]:
    if not isinstance(payload, list) or len(payload) != len(ids):
        raise ValueError("author batch answer does not match the request")
    return {requested: parse_author(item) for requested, item in zip(ids, payload, strict=True)}


def _reference_page(payload) -> tuple[list[CitedWork], list[tuple[str, str, str]], object]:
    if not isinstance(payload, dict):
        raise ValueError("references page is not an object")
    return (*s2_reference_items(payload), payload.get("next"))


def arxiv_key(arxiv_id: str) -> str:
    return f"ARXIV:{arxiv_id}"


T = TypeVar("T")


class SemanticScholarClient(ServiceClient):
    service = SERVICE

    def __init__(self, **kwargs):
        kwargs.setdefault("base_url", settings.SEMANTIC_SCHOLAR_API_URL)
        kwargs.setdefault("rate", settings.SEMANTIC_SCHOLAR_RATE)
        super().__init__(
            headers=only_set({"x-api-key": settings.SEMANTIC_SCHOLAR_API_KEY}), **kwargs
        )

    def papers_by_arxiv_id(self, arxiv_ids: Sequence[str]) -> dict[str, S2Paper | None]:
        """Papers for arXiv ids (at most 500 per request); None for a paper S2 does not know."""
        found: dict[str, S2Paper | None] = {}
        for start in range(0, len(arxiv_ids), PAPER_BATCH_MAX):
            found.update(self._paper_batch(list(arxiv_ids[start : start + PAPER_BATCH_MAX])))
        return found

    def _in_halves(
        self, chunk: list[str], ask: Callable[[list[str]], dict[str, T]]
    ) -> dict[str, T]:
        """`ask(chunk)`: one paper/batch request and its answer, or, where S2 refuses to send
        an answer that large, the answers to the chunk's two halves."""
        try:
            return ask(chunk)
        except ServiceError as exc:
            # "Response would exceed maximum size" (10 MB, e.g. many large collaborations):
            # the same ids in two halves fit.
            if exc.status == 400 and "exceed" in str(exc) and len(chunk) > 1:
                half = len(chunk) // 2
                return {**self._in_halves(chunk[:half], ask), **self._in_halves(chunk[half:], ask)}
            raise

    def _paper_batch(self, chunk: list[str]) -> dict[str, S2Paper | None]:
        return self._in_halves(chunk, self._paper_batch_once)

    def _paper_batch_once(self, chunk: list[str]) -> dict[str, S2Paper | None]:
        keys = [arxiv_key(a) for a in chunk]
        response = self.request(
            "POST", "paper/batch", params={"fields": PAPER_FIELDS}, json={"ids": keys}
        )
        parsed = parsed_answer(
            self.service, response, partial(parse_paper_batch, keys), "paper batch answer"
        )
        return {a: parsed[k] for a, k in zip(chunk, keys, strict=True)}

    def citation_graphs(self, keys: Sequence[str]) -> dict[str, S2CitationGraph | None]:
        """Each paper's references and citing works, by any id S2's batch takes (its own paper
        id, `ARXIV:<id>`), CITATION_BATCH_MAX to a request; None for a paper S2 does not know."""
        found: dict[str, S2CitationGraph | None] = {}
        for start in range(0, len(keys), CITATION_BATCH_MAX):
            found.update(self._citation_batch(list(keys[start : start + CITATION_BATCH_MAX])))
        return found

    def _citation_batch(self, chunk: list[str]) -> dict[str, S2CitationGraph | None]:
        return self._in_halves(chunk, self._citation_batch_once)

    def _citation_batch_once(self, chunk: list[str]) -> dict[str, S2CitationGraph | None]:
        response = self.request(
            "POST", "paper/batch", params={"fields": CITATION_FIELDS}, json={"ids": chunk}
        )
        return parsed_answer(
            self.service, response, partial(parse_citation_batch, chunk), "citation batch answer"
        )

    def references(self, key: str) -> S2References | None:
        """A paper's references from `/paper/{key}/references` (key: S2's paper id or
        `ARXIV:<id>`), every page, following `next`; None when S2 does not know the paper (404).
        A malformed item is set aside, not the page; a malformed page is a ServiceError."""
        works: list[CitedWork] = []
        set_aside: list[tuple[str, str, str]] = []
        offset, pages = 0, 0
        while offset < REFERENCES_MAX:
            response = self.request(
                "GET",
                f"paper/{key}/references",
                params={
                    "fields": REFERENCE_FIELDS,
                    "offset": offset,
                    "limit": REFERENCES_PAGE_SIZE,
                },
                ok_statuses=frozenset({200, 404}),
            )
            if response.status_code == 404:
                return None
            page_works, page_set_aside, following = parsed_answer(
                self.service, response, _reference_page, "references page"
            )
            works += page_works
            set_aside += page_set_aside
            pages += 1
            # A `next` that does not move forward would loop: the list ends there.
            if not isinstance(following, int) or following <= offset:
                break
            offset = following
        return S2References(tuple(works), tuple(set_aside), pages)

    def authors(self, author_ids: Sequence[str]) -> dict[str, S2AuthorRecord | None]:
        """Author records with their figures (at most 1,000 per request); None if unknown."""
        found: dict[str, S2AuthorRecord | None] = {}
        for start in range(0, len(author_ids), AUTHOR_BATCH_MAX):
            chunk = list(author_ids[start : start + AUTHOR_BATCH_MAX])
            response = self.request(
                "POST", "author/batch", params={"fields": AUTHOR_FIELDS}, json={"ids": chunk}
            )
            found.update(
                parsed_answer(
                    self.service,
                    response,
                    partial(parse_author_batch, chunk),
                    "author batch answer",
                )
            )
        return found
