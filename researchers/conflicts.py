"""The conflict-of-interest check: given a paper's authors (by arXiv id) or a list of names, and
candidate reviewers, flag co-authorship within the last N years and shared institutions, each
with the papers and dates that show it and the match confidence of each byline involved.

Names are resolved to researcher records, never guessed: an ORCID iD through the sources' ids,
a researcher page by its id, a name by its name key (a name several records share is checked
against each of them and says so; a name no record has is said to be unresolved). A paper's
authors are its bylines as matched: a byline linked to no record is an unresolved name.

Every query is bounded by the records' own recent bylines (never by the archive's size): the
authors' bylines since the cutoff, the reviewers' bylines on those papers, and the institutions
of all their bylines since the cutoff, in chunks.

The work a request may ask for is bounded before any of it starts: the lines are counted as
given (before any lookup), a name given twice is checked once, and what the names expand to
(record pairs, then the records' recent bylines, counted in one query) is held to a budget; a
check past it is refused with the reason, never started.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import NamedTuple

from django.db.models import Count, Max
from django.utils import timezone

from institutions.models import AuthorshipInstitution, Institution
from papers.models import Authorship, Paper
from wovepaper.lib.batches import chunked
from wovepaper.lib.search import given_name_initials

from .models import Researcher, ResearcherExternalId
from .names import name_key
from .selectors import researcher_survivor_ids

DEFAULT_YEARS = 3
MAX_YEARS = 30
MAX_AUTHORS = 100
MAX_REVIEWERS = 1000
MAX_LINE = 300
# A name shared by more records than this is too common to check: said to be unresolved.
MAX_HOMONYMS = 5
# Budgets on what the names expand to, checked before the work: every author record against
# every reviewer record is a pair (100 authors and 1000 reviewers of one record each fit), and
# every recent byline of those records is read and kept in memory while the check runs.
MAX_PAIRS = MAX_AUTHORS * MAX_REVIEWERS
MAX_BYLINES = 100_000
CHUNK = 1000
ORCID = re.compile(r"(?:orcid\.org/)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])/?$", re.IGNORECASE)
PAGE = re.compile(r"(?:^|/researchers/)(\d{1,18})(?:-[\w-]*)?/?$")


@dataclass
class Resolved:
    """One name as given, and the records it names."""

    given: str
    how: str  # "orcid", "page", "name", "byline"
    records: list[Researcher] = field(default_factory=list)
    # For a paper's byline: how sure matching was that this byline is that record.
    confidence: float | None = None
    method: str = ""
    note: str = ""

    @property
    def status(self) -> str:
        if not self.records:
            return "unresolved"
        return "resolved" if len(self.records) == 1 else "ambiguous"


@dataclass
class BylineEvidence:
    name: str  # as printed on the paper
    confidence: float | None
    method: str


@dataclass
class SharedPaper:
    arxiv_id: str
    title: str
    published: datetime | None
    author_byline: BylineEvidence
    reviewer_byline: BylineEvidence
    # "month" where the date is the month the arXiv identifier names (no source gave the day).
    published_precision: str | None = None


@dataclass
class InstitutionEvidence:
    arxiv_id: str  # the newest paper within the window that lists it ("" for the owner's word)
    published: datetime | None
    byline: BylineEvidence | None
    set_by_researcher: bool = False
    published_precision: str | None = None


@dataclass
class SharedInstitution:
    institution: Institution
    author_evidence: InstitutionEvidence
    reviewer_evidence: InstitutionEvidence


@dataclass
class Flag:
    author: Resolved
    author_record: Researcher
    reviewer: Resolved
    reviewer_record: Researcher
    same_record: bool = False
    papers: list[SharedPaper] = field(default_factory=list)
    institutions: list[SharedInstitution] = field(default_factory=list)


@dataclass
class EarlierCoauthorship:
    """An author and a reviewer who wrote papers together before the window: not a flag, but
    counted, so that the window never leaves a co-authorship out without a word."""

    author_record: Researcher
    reviewer_record: Researcher
    papers: int
    newest_year: int | None


@dataclass
class ConflictReport:
    years: int
    since: date
    paper: Paper | None
    authors: list[Resolved]
    reviewers: list[Resolved]
    flags: list[Flag]
    earlier: list[EarlierCoauthorship] = field(default_factory=list)

    @property
    def unresolved(self) -> list[Resolved]:
        return [r for r in (*self.authors, *self.reviewers) if r.status == "unresolved"]


class ConflictInputError(ValueError):
    """Input the check cannot run on; the message is shown to the reader."""


class NoSuchPaper(ConflictInputError):
    """The arXiv id given is not a paper of this archive."""


class OverBudget(ConflictInputError):
    """What the names expand to is more than one check may do; the message says what and how
    to ask for less."""


def count_lines(lines: Sequence[str]) -> int:
    return sum(1 for line in lines if line.strip())


def check_counts(authors: int, reviewers: int) -> None:
    """Refuses too many authors or reviewers: lines as given (before any lookup), or a paper's
    bylines."""
    if authors > MAX_AUTHORS or reviewers > MAX_REVIEWERS:
        raise ConflictInputError(
            f"At most {MAX_AUTHORS} authors and {MAX_REVIEWERS} reviewers a check."
        )


def _live(records: dict[int, Researcher], ids: Iterable[int]) -> list[Researcher]:
    return [records[i] for i in ids if i in records]


def _fold(lines: Sequence[str]) -> list[tuple[str, str, str]]:
    """(text, kind, key) for each line: an ORCID iD, a researcher page's id or a name key. A
    name, iD or page given again is the same check: it is kept once, as first written, so that
    repeating a name cannot multiply the work or the report."""
    out = []
    seen: set[tuple[str, str]] = set()
    for line in lines:
        # No name, iD or address is longer: a longer line is cut, and then answers to nothing.
        text = " ".join(line.split())[:MAX_LINE]
        if not text:
            continue
        if match := ORCID.search(text):
            kind, key = "orcid", match[1].upper()
        elif match := PAGE.search(text):
            kind, key = "page", str(int(match[1]))
        else:
            kind, key = "name", name_key(text)
        # A line with no name in it (punctuation only) folds only with the same text.
        folded = (kind, key or text.casefold())
        if folded not in seen:
            seen.add(folded)
            out.append((text, kind, key))
    return out


def _initials_key(key: str) -> str:
    """The name key with its given names as initials ("ian sommerville" → "i sommerville"), or
    "" when that is the key itself."""
    words = key.split()
    initials = given_name_initials(words)
    short = " ".join(initial or word for word, initial in zip(words, initials, strict=True))
    return short if short != key else ""


def resolve_names(lines: Sequence[str]) -> list[Resolved]:
    """Each line (an ORCID iD or its URL, a researcher page's address or id, or a name) with the
    live records it names, repeated lines once: a fixed number of queries for the whole list."""
    folded = _fold(lines)
    given = [text for text, _, _ in folded]
    by_orcid = {i: key for i, (_, kind, key) in enumerate(folded) if kind == "orcid"}
    by_page = {i: int(key) for i, (_, kind, key) in enumerate(folded) if kind == "page"}
    by_name = {i: key for i, (_, kind, key) in enumerate(folded) if kind == "name"}
    ext = {}
    if by_orcid:
        variants = set(by_orcid.values())
        variants |= {f"https://orcid.org/{v}" for v in by_orcid.values()}
        ext = {
            value.rstrip("/").rsplit("/", 1)[-1].upper(): rid
            for value, rid in ResearcherExternalId.objects.filter(
                source=ResearcherExternalId.ORCID, value__in=variants
            ).values_list("value", "researcher_id")
        }
    pointed = {i: ext[o] for i, o in by_orcid.items() if o in ext} | by_page
    survivors = researcher_survivor_ids(set(pointed.values())) if pointed else {}
    named: dict[str, list[int]] = defaultdict(list)
    keys = {k for k in by_name.values() if k}
    # As site search reads a name: "Ian Sommerville" also finds the byline "I. Sommerville",
    # whose key is the given names' initials (asked in the same query, taken when the name as
    # given has no record).
    initials = {key: _initials_key(key) for key in keys}
    keys |= {k for k in initials.values() if k}
    live = Researcher.objects.filter(merged_into__isnull=True, is_person=True)
    if keys:
        for rid, key in (
            live.filter(name_key__in=keys)
            .order_by("-paper_count", "pk")
            .values_list("pk", "name_key")
        ):
            named[key].append(rid)
    wanted = set(survivors.values()) | {rid for ids in named.values() for rid in ids}
    records = live.in_bulk(wanted) if wanted else {}
    out = []
    for i, text in enumerate(given):
        if i in by_orcid:
            survivor = survivors.get(pointed.get(i, -1))
            found = _live(records, [survivor] if survivor else [])
            note = "" if found else "no record here carries this ORCID iD"
            out.append(Resolved(text, "orcid", found, note=note))
        elif i in by_page:
            survivor = survivors.get(by_page[i])
            found = _live(records, [survivor] if survivor else [])
            out.append(Resolved(text, "page", found, note="" if found else "no such researcher"))
        else:
            ids = named.get(by_name[i], [])
            by_initials = not ids and bool(named.get(initials.get(by_name[i], "") or ""))
            if by_initials:
                ids = named[initials[by_name[i]]]
            if len(ids) > MAX_HOMONYMS:
                out.append(
                    Resolved(
                        text,
                        "name",
                        [],
                        note=f"{len(ids)} records share this name: give an ORCID iD or a page",
                    )
                )
            else:
                found = _live(records, ids)
                note = "" if found else "no record here has this name"
                if len(found) > 1:
                    note = f"{len(found)} records share this name; each is checked"
                if found and by_initials:
                    shown = found[0].display_name
                    note = (
                        "no record has the name as given; "
                        f"taken as {shown} (given names as initials)"
                        + (f", {note}" if note else "")
                    )
                out.append(Resolved(text, "name", found, note=note))
    return out


def resolve_paper_authors(arxiv_id: str) -> tuple[Paper, list[Resolved]]:
    """The paper's bylines as matched, each with its record and match confidence (two queries
    and the merge walk). Bylines that name no person (collaborations, pieces of an address)
    are left out."""
    paper = Paper.objects.filter(arxiv_id=arxiv_id.strip()).first()
    if paper is None:
        raise NoSuchPaper(f"No paper {arxiv_id.strip()!r} in this archive.")
    bylines = list(
        Authorship.objects.filter(paper=paper, is_person=True)
        .order_by("position")
        .values_list("name", "researcher_id", "match_confidence", "match_method")
    )
    survivors = researcher_survivor_ids({rid for _, rid, _, _ in bylines if rid})
    records = Researcher.objects.filter(is_person=True).in_bulk(set(survivors.values()))
    out = []
    for name, rid, confidence, method in bylines:
        record = records.get(survivors.get(rid, -1)) if rid else None
        out.append(
            Resolved(
                name,
                "byline",
                [record] if record else [],
                confidence=confidence,
                method=method,
                note="" if record else "this byline is matched to no researcher record",
            )
        )
    return paper, out


def _since(years: int, today: date) -> date:
    try:
        return today.replace(year=today.year - years)
    except ValueError:  # 29 February
        return today.replace(year=today.year - years, day=28)


def _window_start(since: date) -> datetime:
    return timezone.make_aware(datetime.combine(since, time.min), timezone.get_current_timezone())


Shared = dict[tuple[int, int], list[tuple[int, BylineEvidence, BylineEvidence]]]
Seen = dict[int, dict[int, tuple[int, BylineEvidence | None]]]


def conflict_check(
    *,
    authors: list[Resolved],
    reviewers: list[Resolved],
    years: int = DEFAULT_YEARS,
    paper: Paper | None = None,
    today: date | None = None,
) -> ConflictReport:
    """Co-authorship since `years` ago and shared institutions between every author record and
    every reviewer record. Queries: the authors' bylines, the reviewers' bylines on those papers
    and the institutions of both, each in chunks of CHUNK ids, then the papers and institutions
    named by a flag: bounded by the records' own recent papers."""
    if not 1 <= years <= MAX_YEARS:
        raise ConflictInputError(f"Choose a number of years from 1 to {MAX_YEARS}.")
    check_counts(len(authors), len(reviewers))
    since = _since(years, today or timezone.localdate())
    start = _window_start(since)
    author_ids = sorted({r.pk for a in authors for r in a.records})
    reviewer_ids = sorted({r.pk for a in reviewers for r in a.records})
    records = {r.pk: r for a in (*authors, *reviewers) for r in a.records}
    _check_budget(author_ids, reviewer_ids, sorted(records), start)
    recent = _recent_bylines(sorted(records), start)
    shared = _coauthorships(recent, author_ids, reviewer_ids)
    at = _institutions(records, recent, start)
    pairs: dict[tuple[int, int], list[int]] = {}
    for author_id in author_ids:
        mine = at.get(author_id, {})
        for reviewer_id in reviewer_ids:
            common = mine.keys() & at.get(reviewer_id, {}).keys()
            if common and author_id != reviewer_id:
                pairs[(author_id, reviewer_id)] = sorted(common)

    # What the flags name: papers (arXiv id, title, date) and institutions.
    paper_ids = {pid for rows in shared.values() for pid, _, _ in rows}
    for (author_id, reviewer_id), insts in pairs.items():
        paper_ids.update(at[author_id][i][0] for i in insts)
        paper_ids.update(at[reviewer_id][i][0] for i in insts)
    paper_ids.discard(0)
    papers: dict[int, Paper] = {}
    for chunk in chunked(sorted(paper_ids), CHUNK):
        papers.update(
            Paper.objects.only("arxiv_id", "title", "published", "published_precision").in_bulk(
                chunk
            )
        )
    institutions = Institution.objects.in_bulk({i for insts in pairs.values() for i in insts})

    candidates = [
        (a, ar, r, rr) for a in authors for ar in a.records for r in reviewers for rr in r.records
    ]
    flags = [
        flag
        for a, ar, r, rr in candidates
        if (flag := _flag(a, ar, r, rr, shared, pairs, at, papers, institutions)) is not None
    ]
    return ConflictReport(
        years=years,
        since=since,
        paper=paper,
        authors=authors,
        reviewers=reviewers,
        flags=flags,
        earlier=_earlier_coauthorships(records, author_ids, reviewer_ids, start),
    )


def _earlier_coauthorships(
    records: dict[int, Researcher], author_ids: list[int], reviewer_ids: list[int], start: datetime
) -> list[EarlierCoauthorship]:
    """Every (author, reviewer) pair with papers together before the window, counted in the
    database (one query per chunk of reviewers): bounded by the authors' own papers."""
    found: list[EarlierCoauthorship] = []
    if not author_ids or not reviewer_ids:
        return found
    for chunk in chunked(reviewer_ids, CHUNK):
        rows = (
            Authorship.objects.filter(
                researcher_id__in=author_ids,
                paper__published__lt=start,
                paper__authorships__researcher_id__in=chunk,
            )
            .values_list("researcher_id", "paper__authorships__researcher_id")
            .annotate(papers=Count("paper_id", distinct=True), newest=Max("paper__published"))
            .order_by()
        )
        for author_id, reviewer_id, count, newest in rows:
            if author_id != reviewer_id:
                found.append(
                    EarlierCoauthorship(
                        records[author_id],
                        records[reviewer_id],
                        count,
                        newest.year if newest else None,
                    )
                )
    found.sort(key=lambda e: (-e.papers, e.author_record.pk, e.reviewer_record.pk))
    return found


def _check_budget(
    author_ids: list[int], reviewer_ids: list[int], record_ids: list[int], start: datetime
) -> None:
    """Refuses a check whose names expand past the budgets, before its work: the pairs from the
    records in hand, then the recent bylines by one count per chunk of records."""
    pairs = len(author_ids) * len(reviewer_ids)
    if pairs > MAX_PAIRS:
        raise OverBudget(
            f"These names name {len(author_ids)} author records and {len(reviewer_ids)} "
            f"reviewer records: {pairs:,} pairs to check, more than the {MAX_PAIRS:,} one check "
            "may compare. Give fewer names, or ORCID iDs for names several records share."
        )
    bylines = sum(
        Authorship.objects.filter(researcher_id__in=chunk, paper__published__gte=start).count()
        for chunk in chunked(record_ids, CHUNK)
    )
    if bylines > MAX_BYLINES:
        raise OverBudget(
            f"These records have {bylines:,} bylines in the window, more than the "
            f"{MAX_BYLINES:,} one check may read. Choose fewer years or fewer names."
        )


class _Byline(NamedTuple):
    record: int
    paper: int
    published: datetime | None
    evidence: BylineEvidence


def _recent_bylines(record_ids: list[int], start: datetime) -> dict[int, _Byline]:
    """Authorship id → byline, for these records' papers since `start`: an index range per
    record (researcher, paper), bounded by their own papers."""
    out: dict[int, _Byline] = {}
    for chunk in chunked(record_ids, CHUNK):
        for pk, rid, paper_id, published, name, confidence, method in (
            Authorship.objects.filter(researcher_id__in=chunk, paper__published__gte=start)
            .order_by()
            .values_list(
                "pk",
                "researcher_id",
                "paper_id",
                "paper__published",
                "name",
                "match_confidence",
                "match_method",
            )
        ):
            out[pk] = _Byline(rid, paper_id, published, BylineEvidence(name, confidence, method))
    return out


def _coauthorships(
    recent: dict[int, _Byline], author_ids: list[int], reviewer_ids: list[int]
) -> Shared:
    """(author, reviewer) → the papers since the cutoff with both, and both bylines: the
    reviewers' bylines are looked up on the authors' recent papers (by paper, a unique index)."""
    authors = set(author_ids)
    author_bylines: dict[int, list[tuple[int, BylineEvidence]]] = defaultdict(list)
    for byline in recent.values():
        if byline.record in authors:
            author_bylines[byline.paper].append((byline.record, byline.evidence))
    shared: Shared = defaultdict(list)
    if not reviewer_ids:
        return shared
    for chunk in chunked(sorted(author_bylines), CHUNK):
        for paper_id, rid, name, confidence, method in (
            Authorship.objects.filter(paper_id__in=chunk, researcher_id__in=reviewer_ids)
            .order_by()
            .values_list("paper_id", "researcher_id", "name", "match_confidence", "match_method")
        ):
            evidence = BylineEvidence(name, confidence, method)
            for author_id, author_evidence in author_bylines[paper_id]:
                if author_id != rid:
                    shared[(author_id, rid)].append((paper_id, author_evidence, evidence))
    return shared


def _institutions(
    records: dict[int, Researcher], recent: dict[int, _Byline], start: datetime
) -> Seen:
    """Record → institution → (the newest paper since the cutoff listing it, that byline);
    paper 0 is the current affiliation the researcher set on their page. The links are read by
    authorship id (the unique index on authorship, institution): a join from the researchers
    made PostgreSQL scan the whole links table (measured at 200k papers)."""
    at: Seen = defaultdict(dict)
    # The filter on the date keeps undated papers out: every byline here has a date.
    oldest_first = sorted(recent, key=lambda pk: (recent[pk].published or start, recent[pk].paper))
    links: dict[int, list[int]] = defaultdict(list)
    for chunk in chunked(oldest_first, CHUNK):
        for authorship_id, inst in (
            AuthorshipInstitution.objects.filter(authorship_id__in=chunk)
            .order_by()
            .values_list("authorship_id", "institution_id")
        ):
            links[authorship_id].append(inst)
    for pk in reversed(oldest_first):
        byline = recent[pk]
        for inst in links.get(pk, ()):
            at[byline.record].setdefault(inst, (byline.paper, byline.evidence))
    for rid, record in records.items():
        if record.current_institution_id and record.current_institution_id not in at[rid]:
            at[rid][record.current_institution_id] = (0, None)
    return at


def _dated(
    seen: tuple[int, BylineEvidence | None], papers: dict[int, Paper]
) -> InstitutionEvidence:
    paper_id, byline = seen
    if not paper_id:
        return InstitutionEvidence(arxiv_id="", published=None, byline=None, set_by_researcher=True)
    paper = papers.get(paper_id)
    return InstitutionEvidence(
        arxiv_id=paper.arxiv_id if paper else "",
        published=paper.published if paper else None,
        byline=byline,
        published_precision=paper.published_precision if paper else None,
    )


def _flag(a, ar, r, rr, shared, pairs, at, papers, institutions) -> Flag | None:
    if ar.pk == rr.pk:
        return Flag(a, ar, r, rr, same_record=True)
    rows = shared.get((ar.pk, rr.pk), [])
    insts = pairs.get((ar.pk, rr.pk), [])
    if not rows and not insts:
        return None
    flag = Flag(a, ar, r, rr)
    seen = set()
    for pid, author_evidence, reviewer_evidence in rows:
        paper = papers.get(pid)
        if paper is None or pid in seen:
            continue
        seen.add(pid)
        flag.papers.append(
            SharedPaper(
                paper.arxiv_id,
                paper.title,
                paper.published,
                author_evidence,
                reviewer_evidence,
                paper.published_precision,
            )
        )
    flag.papers.sort(key=lambda p: (p.published is None, p.published), reverse=True)
    for inst in insts:
        if inst in institutions:
            flag.institutions.append(
                SharedInstitution(
                    institutions[inst],
                    _dated(at[ar.pk][inst], papers),
                    _dated(at[rr.pk][inst], papers),
                )
            )
    return flag


def conflict_check_request(
    *,
    arxiv_id: str = "",
    author_lines: Sequence[str] = (),
    reviewer_lines: Sequence[str] = (),
    years: int = DEFAULT_YEARS,
    today: date | None = None,
) -> ConflictReport:
    """The check from what a reader types: a paper's arXiv id or author lines, and reviewer
    lines (blank lines are skipped, a line given twice is checked once; nothing to check is an
    empty report). Raises NoSuchPaper for an arXiv id this archive does not hold, OverBudget for
    names that expand past what one check may do, ConflictInputError for too long lists."""
    check_counts(0 if arxiv_id.strip() else count_lines(author_lines), count_lines(reviewer_lines))
    paper = None
    if arxiv_id.strip():
        paper, authors = resolve_paper_authors(arxiv_id)
    else:
        authors = resolve_names(author_lines)
    reviewers = resolve_names(reviewer_lines)
    return conflict_check(
        authors=authors, reviewers=reviewers, years=years, paper=paper, today=today
    )


def _byline_data(byline: BylineEvidence | None) -> dict | None:
    if byline is None:
        return None
    return {"name": byline.name, "confidence": byline.confidence, "method": byline.method}


def _record_data(record: Researcher, site: str) -> dict:
    return {
        "id": record.pk,
        "name": record.display_name,
        "url": site + record.get_absolute_url(),
    }


def _resolved_data(resolved: Resolved, site: str) -> dict:
    return {
        "given": resolved.given,
        "how": resolved.how,
        "status": resolved.status,
        "note": resolved.note,
        "confidence": resolved.confidence,
        "method": resolved.method,
        "records": [_record_data(r, site) for r in resolved.records],
    }


def _evidence_data(evidence: InstitutionEvidence) -> dict:
    return {
        "arxiv_id": evidence.arxiv_id,
        "published": evidence.published.isoformat() if evidence.published else None,
        "published_precision": evidence.published_precision,
        "byline": _byline_data(evidence.byline),
        "set_by_researcher": evidence.set_by_researcher,
    }


def conflict_report_data(report: ConflictReport, *, site: str = "") -> dict:
    """The report as JSON-ready data: what the API answers and the markdown page lists."""
    return {
        "years": report.years,
        "since": report.since.isoformat(),
        "paper": (
            {"arxiv_id": report.paper.arxiv_id, "title": report.paper.title}
            if report.paper
            else None
        ),
        "authors": [_resolved_data(a, site) for a in report.authors],
        "reviewers": [_resolved_data(r, site) for r in report.reviewers],
        "unresolved": [r.given for r in report.unresolved],
        "flags": [
            {
                "author": {"given": f.author.given, "record": _record_data(f.author_record, site)},
                "reviewer": {
                    "given": f.reviewer.given,
                    "record": _record_data(f.reviewer_record, site),
                },
                "same_record": f.same_record,
                "coauthored": [
                    {
                        "arxiv_id": p.arxiv_id,
                        "title": p.title,
                        "published": p.published.isoformat() if p.published else None,
                        "published_precision": p.published_precision,
                        "author_byline": _byline_data(p.author_byline),
                        "reviewer_byline": _byline_data(p.reviewer_byline),
                    }
                    for p in f.papers
                ],
                "shared_institutions": [
                    {
                        "institution": {
                            "name": s.institution.name,
                            "ror_id": s.institution.ror_id or "",
                            "url": site + s.institution.get_absolute_url(),
                        },
                        "author_evidence": _evidence_data(s.author_evidence),
                        "reviewer_evidence": _evidence_data(s.reviewer_evidence),
                    }
                    for s in f.institutions
                ],
            }
            for f in report.flags
        ],
        "earlier": [
            {
                "author": _record_data(e.author_record, site),
                "reviewer": _record_data(e.reviewer_record, site),
                "papers": e.papers,
                "newest_year": e.newest_year,
            }
            for e in report.earlier
        ],
    }
