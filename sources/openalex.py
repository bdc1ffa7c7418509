"""OpenAlex API: works by arXiv DOI (OR-filters of up to 100) and authors by id.

Parsing is in pure functions returning dataclasses; `OpenAlexClient` is the network part.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from django.conf import settings

from sources.citation_answers import (
    CitedWork,
    openalex_counts_by_year,
    openalex_referenced_works,
)
from wovepaper.lib.http import ServiceClient, only_set, parsed_answer
from wovepaper.lib.identifiers import ARXIV_DOI_PREFIX
from wovepaper.lib.text import written_in_latin

SERVICE = "OpenAlex"
WORK_FIELDS = "id,doi,cited_by_count,authorships,primary_location,locations,is_authors_truncated"
# What a work's citations need, and what finds its arXiv id (work_arxiv_id) in a list answer.
CITATION_WORK_FIELDS = (
    "id,doi,primary_location,locations,cited_by_count,referenced_works,counts_by_year"
)
AUTHOR_FIELDS = "id,display_name,orcid,works_count,cited_by_count,summary_stats"
FILTER_MAX = 100
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^?#\s]+?)(?:v\d+)?(?:\.pdf)?$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class OAInstitution:
    openalex_id: str | None  # bare, e.g. I161548249
    ror_id: str | None  # bare, e.g. 006jb1a24
    name: str
    country_code: str
    type: str


@dataclass(frozen=True, slots=True)
class OAAuthorship:
    author_id: str | None  # bare, e.g. A5009341822
    display_name: str
    raw_author_name: str
    orcid: str | None  # bare, e.g. 0000-0001-7718-3181
    institutions: tuple[OAInstitution, ...] = ()

    @property
    def spellings(self) -> list[str]:
        return [n for n in (self.display_name, self.raw_author_name) if n]

    @property
    def identity_spellings(self) -> list[str]:
        """What a byline name is compared with to take this author's OpenAlex identity: the
        identity's own name. The name printed on the paper (`raw_author_name`) is the byline's
        and agrees with it even where OpenAlex gave the authorship to someone else ("Richard
        Evans" printed, identity "K Taki"), so it counts only where the identity's name cannot
        be compared, being empty or written without Latin letters ("拓也 大嶋")."""
        if self.display_name and written_in_latin(self.display_name):
            return [self.display_name]
        return self.spellings


@dataclass(frozen=True, slots=True)
class OAWork:
    work_id: str
    arxiv_id: str | None
    doi: str | None
    cited_by_count: int | None
    authorships: tuple[OAAuthorship, ...] = ()
    authors_truncated: bool = False


@dataclass(frozen=True, slots=True)
class OACitations:
    """What OpenAlex lists of one work's citations: the works it cites (OpenAlex ids only),
    its citation count and its citations per recent year ([[year, count], ...])."""

    work_id: str
    arxiv_id: str | None
    cited_by_count: int | None
    references: tuple[CitedWork, ...]
    counts_by_year: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class OAAuthorRecord:
    author_id: str
    display_name: str
    orcid: str | None
    h_index: int | None
    citation_count: int | None
    works_count: int | None


def bare_id(url: str | None) -> str | None:
    """ "https://openalex.org/A5…" → "A5…"; the same for ORCID, ROR and DOI URLs."""
    if not url:
        return None
    value = str(url).strip().rstrip("/")
    for prefix in (
        "https://openalex.org/",
        "https://orcid.org/",
        "https://ror.org/",
        "https://doi.org/",
        "http://orcid.org/",
    ):
        if value.lower().startswith(prefix):
            return value[len(prefix) :]
    return value


def arxiv_doi(arxiv_id: str) -> str:
    return f"{ARXIV_DOI_PREFIX}{arxiv_id}".lower()


def clean_raw_author_name(raw: str | None) -> str:
    """The printed name, without OpenAlex's "None " prefix for a missing first part."""
    name = (raw or "").strip()
    if name.startswith("None "):
        name = name[5:].strip()
    return name


def work_arxiv_id(data: dict) -> str | None:
    """The arXiv id of a work: its arXiv DOI, or else an arxiv.org location.

    A preprint folded into its published version keeps the journal DOI but still lists the
    arXiv landing page among its locations.
    """
    doi = (bare_id(data.get("doi")) or "").lower()
    if doi.startswith(ARXIV_DOI_PREFIX):
        return doi[len(ARXIV_DOI_PREFIX) :]
    for location in [data.get("primary_location") or {}, *(data.get("locations") or [])]:
        for key in ("landing_page_url", "pdf_url"):
            match = _ARXIV_URL.search(location.get(key) or "")
            if match:
                return match.group(1).lower()
    return None


def _institution(data: dict) -> OAInstitution:
    return OAInstitution(
        openalex_id=bare_id(data.get("id")),
        ror_id=(bare_id(data.get("ror")) or "").lower() or None,
        name=(data.get("display_name") or "").strip(),
        country_code=(data.get("country_code") or "")[:2].upper(),
        type=data.get("type") or "",
    )


def parse_work(data: dict) -> OAWork:
    authorships = []
    for ship in data.get("authorships") or []:
        author = ship.get("author") or {}
        authorships.append(
            OAAuthorship(
                author_id=bare_id(author.get("id")),
                display_name=(author.get("display_name") or "").strip(),
                raw_author_name=clean_raw_author_name(ship.get("raw_author_name")),
                orcid=bare_id(author.get("orcid")),
                institutions=tuple(
                    _institution(i)
                    for i in ship.get("institutions") or []
                    if i.get("id") or i.get("ror")
                ),
            )
        )
    count = data.get("cited_by_count")
    return OAWork(
        work_id=bare_id(data.get("id")) or "",
        arxiv_id=work_arxiv_id(data),
        doi=(bare_id(data.get("doi")) or "").lower() or None,
        cited_by_count=count if isinstance(count, int) and count >= 0 else None,
        authorships=tuple(authorships),
        authors_truncated=bool(data.get("is_authors_truncated")),
    )


def _parse_single_work(payload: dict) -> OAWork:
    if not isinstance(payload, dict) or not payload.get("id"):
        raise ValueError("not a work (no id)")
    return parse_work(payload)


def parse_works_page(payload: dict) -> list[OAWork]:
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
        raise ValueError("not a list answer (no results)")
    return [parse_work(w) for w in payload["results"] if isinstance(w, dict) and w.get("id")]


def parse_citations(data: dict) -> OACitations:
    count = data.get("cited_by_count")
    return OACitations(
        work_id=bare_id(data.get("id")) or "",
        arxiv_id=work_arxiv_id(data),
        cited_by_count=count if isinstance(count, int) and count >= 0 else None,
        references=tuple(openalex_referenced_works(data)),
        counts_by_year=tuple((year, cited) for year, cited in openalex_counts_by_year(data)),
    )


def parse_citations_page(payload: dict) -> list[OACitations]:
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
        raise ValueError("not a list answer (no results)")
    return [parse_citations(w) for w in payload["results"] if isinstance(w, dict) and w.get("id")]


def parse_author(data: dict) -> OAAuthorRecord | None:
    author_id = bare_id(data.get("id"))
    if not author_id:
        return None
    stats = data.get("summary_stats") or {}

    def count(value) -> int | None:
        return value if isinstance(value, int) and value >= 0 else None

    return OAAuthorRecord(
        author_id=author_id,
        display_name=(data.get("display_name") or "").strip(),
        orcid=bare_id(data.get("orcid")),
        h_index=count(stats.get("h_index")),
        citation_count=count(data.get("cited_by_count")),
        works_count=count(data.get("works_count")),
    )


def parse_authors_page(payload: dict) -> list[OAAuthorRecord]:
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
        raise ValueError("no results")
    return [r for r in (parse_author(a) for a in payload["results"] if isinstance(a, dict)) if r]


W = TypeVar("W", OAWork, OACitations)


def most_complete_by_arxiv_id(
    requested: Sequence[str], works: Sequence[W], size: Callable[[W], int]
) -> dict[str, W | None]:
    """Pick, for each requested arXiv id, the work that is that paper; None if none is.

    List answers may hold works that were not asked for (a DOI filter matches several records
    of one paper); only works whose arXiv id is the requested one count, and of several the one
    `size` finds largest wins (the most complete record).
    """
    wanted = {a.lower(): a for a in requested}
    found: dict[str, W | None] = dict.fromkeys(requested)
    for work in works:
        original = wanted.get((work.arxiv_id or "").lower())
        if original is None:
            continue
        current = found[original]
        if current is None or size(work) > size(current):
            found[original] = work
    return found


def works_by_arxiv_id(
    requested: Sequence[str], works: Sequence[OAWork]
) -> dict[str, OAWork | None]:
    """Each requested arXiv id's work; of several records, the one with the most authorships."""
    return most_complete_by_arxiv_id(requested, works, lambda work: len(work.authorships))


class OpenAlexClient(ServiceClient):
    service = SERVICE

    def __init__(self, **kwargs):
        params = {"api_key": settings.OPENALEX_API_KEY, "mailto": settings.OPENALEX_EMAIL}
        kwargs.setdefault("base_url", settings.OPENALEX_API_URL)
        kwargs.setdefault("rate", settings.OPENALEX_RATE)
        super().__init__(params=only_set(params), **kwargs)

    def _list(self, path: str, params: dict, parse: Callable[[dict], list]) -> list:
        response = self.request("GET", path, params=params)
        return parsed_answer(self.service, response, parse, f"answer from /{path}")

    def works_by_arxiv_id(self, arxiv_ids: Sequence[str]) -> dict[str, OAWork | None]:
        """Works for arXiv ids, by arXiv DOI, 100 to a request; None for an unknown paper."""
        found: dict[str, OAWork | None] = {}
        for chunk, works in self._works_by_arxiv_doi(arxiv_ids, WORK_FIELDS, parse_works_page):
            found.update(works_by_arxiv_id(chunk, works))
        return found

    def _works_by_arxiv_doi(
        self, arxiv_ids: Sequence[str], select: str, parse: Callable[[dict], list]
    ) -> Iterator[tuple[list[str], list]]:
        """Each chunk of FILTER_MAX arXiv ids with the works OpenAlex holds under their arXiv
        DOIs (one request a chunk), parsed by `parse`."""
        for start in range(0, len(arxiv_ids), FILTER_MAX):
            chunk = list(arxiv_ids[start : start + FILTER_MAX])
            params = {
                "filter": "doi:" + "|".join(arxiv_doi(a) for a in chunk),
                "per_page": str(FILTER_MAX),
                "select": select,
            }
            yield chunk, self._list("works", params, parse)

    def citations_by_arxiv_id(self, arxiv_ids: Sequence[str]) -> dict[str, OACitations | None]:
        """Each paper's referenced works and citations per year, by arXiv DOI as
        works_by_arxiv_id asks, 100 to a request; None for a paper OpenAlex does not know.
        Of several records of one paper, the one listing the most references wins."""
        found: dict[str, OACitations | None] = {}
        for chunk, works in self._works_by_arxiv_doi(
            arxiv_ids, CITATION_WORK_FIELDS, parse_citations_page
        ):
            found.update(most_complete_by_arxiv_id(chunk, works, lambda work: len(work.references)))
        return found

    def work(self, work_id: str) -> OAWork | None:
        """One work by its bare id, with its whole author list (list answers cut it at 100);
        None when OpenAlex no longer knows the id (a work merged meanwhile)."""
        response = self.request(
            "GET",
            f"works/{work_id}",
            params={"select": WORK_FIELDS},
            ok_statuses=frozenset({200, 404}),
        )
        if response.status_code == 404:
            return None
        return parsed_answer(self.service, response, _parse_single_work, f"answer for {work_id}")

    def complete_authors(self, works: dict[str, OAWork | None]) -> dict[str, OAWork | None]:
        """The same works, each whose author list was cut (`is_authors_truncated`) asked for
        alone, so that every author of a large collaboration gets an OpenAlex id."""
        complete = dict(works)
        for key, work in works.items():
            if work is not None and work.authors_truncated:
                whole = self.work(work.work_id)
                if whole is not None and len(whole.authorships) > len(work.authorships):
                    complete[key] = whole
        return complete

    def authors(self, author_ids: Sequence[str]) -> dict[str, OAAuthorRecord | None]:
        """Author records with their figures, 100 to a request; None for an unknown id."""
        found: dict[str, OAAuthorRecord | None] = {}
        for start in range(0, len(author_ids), FILTER_MAX):
            chunk = list(author_ids[start : start + FILTER_MAX])
            records = self._list(
                "authors",
                {
                    "filter": "openalex:" + "|".join(chunk),
                    "per_page": str(FILTER_MAX),
                    "select": AUTHOR_FIELDS,
                },
                parse_authors_page,
            )
            by_id = {r.author_id: r for r in records}
            found.update({a: by_id.get(a) for a in chunk})
        return found
