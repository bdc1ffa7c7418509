"""Importing a reference manager's export (BibTeX or RIS, as Zotero, Google Scholar, Mendeley,
JabRef or a publisher's site write them) into a reader's list.

Each entry is matched to a paper held here by its arXiv id (an `eprint` field, an arXiv URL, an
`arXiv:` mention such as Google Scholar's "arXiv preprint arXiv:1706.03762", or arXiv's own DOI
10.48550/arXiv.<id>), else by its DOI, else by its title; the report says which matched and how,
and which did not. Reading is bounded (IMPORT_MAX_BYTES, IMPORT_MAX_ENTRIES) and so is the
matching: one query for all the arXiv ids, one for all the DOIs, and at most
IMPORT_MAX_TITLE_SEARCHES keyword searches for the titles left (the paper search's engine; no
title index would serve a 2.6M-row table better than it does).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

import bibtexparser
import rispy
from django.contrib.auth.models import User
from django.db.models.functions import Lower

from papers.converters import normalize_old_style
from papers.models import Paper
from papers.search import paper_search
from wovepaper.lib.identifiers import ARXIV_MENTION, DOI_IN_TEXT, arxiv_id_parsed

from . import services
from .models import ReadingList

IMPORT_MAX_BYTES = 5 * 1024 * 1024
IMPORT_MAX_ENTRIES = 2000
IMPORT_MAX_TITLE_SEARCHES = 200

_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+\s*")


@dataclass(frozen=True)
class Reference:
    """What an entry of the file says about its work."""

    title: str = ""
    arxiv_id: str = ""
    doi: str = ""
    key: str = ""


@dataclass
class ImportReport:
    """What an import did: each entry with the paper it matched and how, or none."""

    matched: list[tuple[Reference, Paper, str]] = field(default_factory=list)
    unmatched: list[Reference] = field(default_factory=list)
    added: int = 0
    # Entries past IMPORT_MAX_ENTRIES, or whose titles were not searched for
    # (IMPORT_MAX_TITLE_SEARCHES), said so on the page.
    entries_skipped: int = 0
    titles_not_searched: int = 0
    error: str = ""


class UnreadableFile(ValueError):
    """A file that cannot be read as BibTeX or RIS; the message is shown to the reader."""


def title_key(title: str) -> str:
    """A title as compared: LaTeX commands, braces, accents, punctuation and case dropped."""
    text = _LATEX_COMMAND.sub(" ", title)
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def _arxiv_id(values: Iterable[str]) -> str:
    for value in values:
        value = value.strip()
        # A reference manager may upper-case an old-style archive (HEP-TH/9901001).
        exact = arxiv_id_parsed(value) or arxiv_id_parsed(normalize_old_style(value))
        if exact:
            return normalize_old_style(exact)
        if found := ARXIV_MENTION.search(value):
            return normalize_old_style(found.group(1))
    return ""


def _doi(value: str) -> str:
    found = DOI_IN_TEXT.search(value or "")
    return found.group(0).rstrip(".,;") if found else ""


def _reference(*, title: str, key: str, doi_values: list[str], texts: list[str]) -> Reference:
    doi = next((d for d in (_doi(v) for v in doi_values) if d), "")
    arxiv_id = _arxiv_id([doi, *texts]) if doi.lower().startswith("10.48550/") else ""
    arxiv_id = arxiv_id or _arxiv_id(texts)
    if doi.lower().startswith("10.48550/"):
        doi = ""  # arXiv's own DOI names the preprint: matched by its id, not as a DOI
    return Reference(title=" ".join(title.split()), arxiv_id=arxiv_id, doi=doi, key=key)


def references_from_bibtex(text: str) -> list[Reference]:
    library = bibtexparser.parse_string(text)
    references = []
    for entry in library.entries:
        fields = {f.key.lower(): str(f.value) for f in entry.fields}
        archive = fields.get("archiveprefix", "").lower()
        eprint = fields.get("eprint", "")
        texts = [
            eprint if archive in ("", "arxiv") else "",
            fields.get("arxivid", ""),
            fields.get("url", ""),
            fields.get("journal", ""),
            fields.get("note", ""),
            fields.get("howpublished", ""),
            fields.get("volume", ""),
        ]
        references.append(
            _reference(
                title=fields.get("title", "").replace("{", "").replace("}", ""),
                key=entry.key,
                doi_values=[fields.get("doi", "")],
                texts=[t for t in texts if t],
            )
        )
    return references


def references_from_ris(text: str) -> list[Reference]:
    try:
        entries = rispy.loads(text, skip_unknown_tags=True, enforce_list_tags=False)
    except (OSError, ValueError) as exc:
        raise UnreadableFile(f"The file could not be read as RIS: {exc}") from exc
    references = []
    for entry in entries:
        title = next(iter(_ris_values(entry, "title", "primary_title", "translated_title")), "")
        references.append(
            _reference(
                title=title,
                key=next(iter(_ris_values(entry, "id")), ""),
                doi_values=_ris_values(entry, "doi"),
                texts=_ris_values(
                    entry,
                    "accession_number",
                    "urls",
                    "url",
                    "notes",
                    "note",
                    "volume",
                    "journal_name",
                    "alternate_title3",
                    "custom1",
                    "custom2",
                ),
            )
        )
    return references


def _ris_values(entry: dict, *names: str) -> list[str]:
    out: list[str] = []
    for name in names:
        value = entry.get(name)
        if isinstance(value, list):
            out += [str(v) for v in value]
        elif value:
            out.append(str(value))
    return out


def references_read(text: str, *, filename: str = "") -> list[Reference]:
    """The entries of a BibTeX or RIS file (told apart by the name's extension, else by the
    text: RIS lines start with a two-letter tag)."""
    name = filename.lower()
    is_ris = name.endswith((".ris", ".txt")) or bool(re.match(r"\s*(?:\d+\.\s*)?TY {1,2}- ", text))
    if name.endswith((".bib", ".bibtex")):
        is_ris = False
    return references_from_ris(text) if is_ris else references_from_bibtex(text)


def references_match(references: list[Reference]) -> ImportReport:
    """Each reference's paper: by arXiv id (one query), by DOI (one query, the DOI index is on
    its lower case), then by title (a keyword search each, at most IMPORT_MAX_TITLE_SEARCHES,
    taken when the found paper's title is the same once folded)."""
    report = ImportReport()
    held = Paper.objects.filter(is_deleted=False)
    by_arxiv = held.in_bulk({r.arxiv_id for r in references if r.arxiv_id}, field_name="arxiv_id")
    dois = {r.doi.lower() for r in references if r.doi}
    by_doi: dict[str, Paper] = {}
    if dois:
        # The DOI index is partial (no empty DOIs): the query says so to be able to use it.
        with_doi = held.exclude(doi="").annotate(doi_lower=Lower("doi"))
        for found in with_doi.filter(doi_lower__in=dois):
            by_doi.setdefault(found.doi.lower(), found)
    searches = 0
    for reference in references:
        paper: Paper | None = by_arxiv.get(reference.arxiv_id) if reference.arxiv_id else None
        how = "arXiv id"
        if paper is None and reference.doi:
            paper, how = by_doi.get(reference.doi.lower()), "DOI"
        if paper is None and title_key(reference.title):
            if searches >= IMPORT_MAX_TITLE_SEARCHES:
                report.titles_not_searched += 1
            else:
                searches += 1
                paper, how = _paper_with_title(reference.title), "title"
        if paper is None:
            report.unmatched.append(reference)
        else:
            report.matched.append((reference, paper, how))
    return report


def _paper_with_title(title: str) -> Paper | None:
    wanted = title_key(title)
    words = " ".join(wanted.split()[:30])
    for paper in paper_search(words, mode="keyword", limit=5).items:
        if title_key(paper.title) == wanted:
            return paper
    return None


def library_import(
    *, user: User, reading_list: ReadingList, text: str, filename: str = ""
) -> ImportReport:
    """Read the file, match its entries and save the matched papers into the list (papers
    already in it stay as they were, notes included). Idempotent: importing the same file
    again adds nothing. A file that cannot be read comes back as a report with `error`."""
    if reading_list.user_id != user.pk:
        raise services.LibraryError("That list is not yours.")
    try:
        references = references_read(text, filename=filename)
    except UnreadableFile as exc:
        return ImportReport(error=str(exc))
    skipped = max(len(references) - IMPORT_MAX_ENTRIES, 0)
    report = references_match(references[:IMPORT_MAX_ENTRIES])
    report.entries_skipped = skipped
    papers = list({paper.pk: paper for _, paper, _ in report.matched}.values())
    report.added = services.papers_save(reading_list=reading_list, papers=papers)
    return report
