"""The sources' citation answers read as cited works: pure functions over the decoded JSON of a
recorded or live Semantic Scholar or OpenAlex answer, returning `CitedWork`s, and the key that
names a cited work. No database and no Django here, so the clients and tools that parse
answers need no configured project (papers.citations.load loads what these return).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from wovepaper.lib.identifiers import ARXIV_DOI, arxiv_id_parsed, doi_normalized

_OPENALEX_PREFIX = "https://openalex.org/"
_TITLE_WORDS = re.compile(r"\w+")


@dataclass(slots=True)
class CitedWork:
    """A work one archive paper cites, with the ids and facts the source gave for it."""

    arxiv_id: str = ""
    doi: str = ""
    s2_id: str = ""
    openalex_id: str = ""
    title: str = ""
    year: int | None = None
    citation_count: int | None = None
    is_influential: bool | None = None
    intents: list[str] = field(default_factory=list)
    contexts: list[str] = field(default_factory=list)


def arxiv_id_or_blank(raw: str | None) -> str:
    """An arXiv id without prefix or version, or "" when `raw` is none."""
    return arxiv_id_parsed(raw) or ""


def openalex_short_id(raw: str | None) -> str:
    value = (raw or "").strip()
    return value[len(_OPENALEX_PREFIX) :] if value.startswith(_OPENALEX_PREFIX) else value


def work_from_ids(
    *, arxiv: str | None, doi: str | None, s2_id: str | None = None, openalex: str | None = None
) -> CitedWork:
    doi_value = doi_normalized(doi)
    arxiv_id = arxiv_id_or_blank(arxiv)
    if not arxiv_id and (match := ARXIV_DOI.match(doi_value)):
        arxiv_id = arxiv_id_or_blank(match["id"])
    return CitedWork(
        arxiv_id=arxiv_id,
        doi=doi_value,
        s2_id=s2_id or "",
        openalex_id=openalex_short_id(openalex),
    )


def s2_work(paper: dict[str, Any]) -> CitedWork:
    """A Semantic Scholar paper object (as in `references`, `citations` or `citedPaper`)."""
    ids = paper.get("externalIds") or {}
    work = work_from_ids(arxiv=ids.get("ArXiv"), doi=ids.get("DOI"), s2_id=paper.get("paperId"))
    work.title = paper.get("title") or ""
    work.year = paper.get("year")
    work.citation_count = paper.get("citationCount")
    return work


def s2_references(paper: dict[str, Any]) -> list[CitedWork]:
    """The works a Semantic Scholar paper object cites (its `references` field, as the paper
    and paper batch endpoints return it). S2 gives no influence, intent or context here."""
    return [s2_work(reference) for reference in paper.get("references") or []]


def s2_citing_works(paper: dict[str, Any]) -> list[CitedWork]:
    """The works citing a Semantic Scholar paper object (its `citations` field), described as
    works so that those in the archive become edges from them to this paper."""
    return [s2_work(citing) for citing in paper.get("citations") or []]


def s2_reference_page(page: dict[str, Any]) -> list[CitedWork]:
    """One page of `/paper/{id}/references`: each cited paper with `isInfluential`, `intents`
    and `contexts` (the citing sentences), where the answer has them. Malformed items are left
    out (`s2_reference_items` says which and why)."""
    return s2_reference_items(page)[0]


def _malformed_reference(item: Any) -> str:
    """Why an item of a references page cannot be read as a cited work ("" when it can)."""
    if not isinstance(item, dict):
        return "item is not an object"
    cited = item.get("citedPaper")
    if not isinstance(cited, dict):
        return "citedPaper is not an object"
    if not isinstance(cited.get("externalIds") or {}, dict):
        return "citedPaper.externalIds is not an object"
    for name in ("year", "citationCount"):
        value = cited.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            return f"citedPaper.{name} is not a number: {value!r}"[:300]
    for name in ("paperId", "title"):
        if not isinstance(cited.get(name) or "", str):
            return f"citedPaper.{name} is not a string"
    if item.get("isInfluential") not in (None, True, False):
        return f"isInfluential is not a boolean: {item.get('isInfluential')!r}"[:300]
    for name in ("intents", "contexts"):
        values = item.get(name) or []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            return f"{name} is not a list of strings"
    return ""


def s2_reference_items(
    page: dict[str, Any],
) -> tuple[list[CitedWork], list[tuple[str, str, str]]]:
    """One page of `/paper/{id}/references` as (works, set aside): the readable items as
    works, and for each malformed one (id, reason, the item as JSON), its id the cited paper's
    S2 id when it has one, else its position in the whole list (`#<offset + index>`), so that
    one bad item costs its own edge and not the paper's list."""
    items = page.get("data")
    if not isinstance(items, list):
        raise ValueError("references page has no list of data")
    offset = page.get("offset")
    offset = offset if isinstance(offset, int) else 0
    works, set_aside = [], []
    for index, item in enumerate(items):
        if reason := _malformed_reference(item):
            cited = item.get("citedPaper") if isinstance(item, dict) else None
            paper_id = cited.get("paperId") if isinstance(cited, dict) else None
            set_aside.append(
                (
                    paper_id if isinstance(paper_id, str) and paper_id else f"#{offset + index}",
                    reason,
                    json.dumps(item, default=str)[:2000],
                )
            )
            continue
        work = s2_work(item["citedPaper"])
        work.is_influential = item.get("isInfluential")
        work.intents = list(item.get("intents") or [])
        work.contexts = [context for context in item.get("contexts") or [] if context]
        works.append(work)
    return works, set_aside


def openalex_referenced_works(work: dict[str, Any]) -> list[CitedWork]:
    """The works an OpenAlex work cites: `referenced_works` holds OpenAlex ids only, so these
    resolve through the archive papers' stored OpenAlex ids or stay as links out."""
    return [
        work_from_ids(arxiv=None, doi=None, openalex=ref)
        for ref in work.get("referenced_works") or []
    ]


def openalex_counts_by_year(work: dict[str, Any]) -> list[list[int]]:
    """An OpenAlex work's `counts_by_year` as [[year, cited_by_count], ...], newest first.
    OpenAlex lists only recent years (the last ten), so older citations are not in it."""
    counts = []
    for entry in work.get("counts_by_year") or []:
        year, cited = entry.get("year"), entry.get("cited_by_count")
        if isinstance(year, int) and isinstance(cited, int) and cited >= 0:
            counts.append([year, cited])
    return sorted(counts, reverse=True)


def title_key(title: str, year: int | None) -> str:
    words = " ".join(_TITLE_WORDS.findall(title.lower()))
    return "title:" + hashlib.sha1(f"{words}|{year or ''}".encode()).hexdigest()


def work_key(work: CitedWork, paper_arxiv_id: str = "") -> str:
    """The key naming a cited work in its edges: the archive paper's arXiv id when it resolved
    (so a preprint cited by its journal DOI and by its arXiv id is one work), else the first of
    arXiv id, DOI, S2 id, OpenAlex id, else a digest of its title and year ("" for nothing)."""
    if paper_arxiv_id or work.arxiv_id:
        return f"arxiv:{paper_arxiv_id or work.arxiv_id}"
    if work.doi:
        return f"doi:{work.doi}"[:300]
    if work.s2_id:
        return f"s2:{work.s2_id}"
    if work.openalex_id:
        return f"openalex:{work.openalex_id}"
    return title_key(work.title, work.year) if work.title else ""
