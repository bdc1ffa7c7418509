"""Importing a reference manager's export (BibTeX or RIS, as Zotero, Google Scholar, Mendeley,
JabRef or a publisher's site write them) into a reader's list.

Each entry is matched to a paper held here by its arXiv id (an `eprint` field, an arXiv URL, an
`arXiv:` mention such as Google Scholar's "arXiv preprint arXiv:1706.03762", or arXiv's own DOI
10.48550/arXiv.<id>), else by its DOI, else by its title; the report says which matched and how,
and which did not. Reading is bounded before it starts: the size (IMPORT_MAX_BYTES), then the
blocks the parser would read, counted with one regular expression (IMPORT_MAX_BLOCKS: a parser
spends ~38 µs a block, so the size alone let 800,000 two-byte blocks hold a worker a minute),
then the time, checked between chunks of blocks (IMPORT_PARSE_SECONDS). An entry the parser
cannot read is reported as such and the others are imported. Control characters (NUL among
them, which PostgreSQL refuses in a comparison) are taken out of the text first. So is the
matching: one query for all the arXiv ids, one for all the DOIs, and at most
IMPORT_MAX_TITLE_SEARCHES keyword searches for the titles left (the paper search's engine; no
title index would serve a 2.6M-row table better than it does).
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import bibtexparser
import rispy
from django.contrib.auth.models import User
from pylatexenc.latex2text import LatexNodes2Text

from papers.converters import normalize_old_style
from papers.models import Paper
from papers.search import paper_search
from papers.selectors import papers_by_doi
from wovepaper.lib.identifiers import ARXIV_MENTION, DOI_IN_TEXT, arxiv_id_parsed

from .lists import LibraryError
from .models import ReadingList, SavedPaper
from .notes import NOTE_MAX_CHARS

IMPORT_MAX_BYTES = 5 * 1024 * 1024
IMPORT_MAX_ENTRIES = 2000
IMPORT_MAX_TITLE_SEARCHES = 200
# Blocks (entries, comments, @string and @preamble) of a file: the entries' limit and room for
# the rest. A parse of this many takes a fraction of a second.
IMPORT_MAX_BLOCKS = 5000
IMPORT_PARSE_SECONDS = 5.0
# Blocks parsed at once between two looks at the clock.
PARSE_CHUNK_BLOCKS = 250
# Unreadable entries named on the page; the rest are counted.
MAX_UNREADABLE_SHOWN = 20

# C0 controls but tab and line ends, and DEL: no reference field means one.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Where bibtexparser may start a block: any "@word{" or "@word(", not only at a line's start.
_BIBTEX_BLOCK = re.compile(r"@\s*\w*\s*[{(]")
# A block starting a line: where a file is cut into chunks to be parsed one at a time.
_BIBTEX_LINE_BLOCK = re.compile(r"^[ \t]*@", re.MULTILINE)
_RIS_START = re.compile(r"^[ \t]*(?:\d+\.[ \t]*)?TY {1,2}- ", re.MULTILINE)
_RIS_END = re.compile(r"^[ \t]*ER {1,2}-", re.MULTILINE)

# TeX in text mode read as Unicode (accents, \\ss, \\&), formulas left as they are.
_TEXT_MODE = LatexNodes2Text(math_mode="verbatim")
# The N1 lines papers.citations.export writes about the export itself.
_EXPORT_NOTE = re.compile(r"^(?:First \d+ authors listed\.|Also DOI |The \d+ papers saved last)")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+\s*")


@dataclass(frozen=True)
class Reference:
    """What an entry of the file says about its work."""

    title: str = ""
    arxiv_id: str = ""
    doi: str = ""
    key: str = ""
    # The reader's own note on the entry (BibTeX's annote, as Zotero writes it; RIS's N1).
    note: str = ""


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
    # Entries the parser could not read, each said where and why (the first
    # MAX_UNREADABLE_SHOWN), and how many there were in all.
    unreadable: list[str] = field(default_factory=list)
    unreadable_count: int = 0
    error: str = ""

    @property
    def references_read(self) -> int:
        """The references matched and not: what "N of M found" counts."""
        return len(self.matched) + len(self.unmatched)


@dataclass
class ParsedFile:
    references: list[Reference] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    unreadable_count: int = 0

    def failed(self, where: str) -> None:
        self.unreadable_count += 1
        if len(self.unreadable) < MAX_UNREADABLE_SHOWN:
            self.unreadable.append(where)


def _case_braces_dropped(title: str) -> str:
    """A BibTeX title without the braces that protect its case ("{SU(2)} chains"), those of
    its formulas kept ("$\\bar{M}_{0,6}$")."""
    parts = re.split(r"(?<!\\)(\$[^$]*\$)", title)
    return "".join(
        part if part.startswith("$") else part.replace("{", "").replace("}", "") for part in parts
    )


class UnreadableFile(ValueError):
    """A file that cannot be read as BibTeX or RIS; the message is shown to the reader."""


def title_key(title: str) -> str:
    """A title as compared: TeX accents read as the letters they make (G{\\"o}del is Gödel),
    then other LaTeX commands, braces, accents, punctuation and case dropped."""
    text = _LATEX_COMMAND.sub(" ", _TEXT_MODE.latex_to_text(title) if "\\" in title else title)
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


def _reference(
    *, title: str, key: str, doi_values: list[str], texts: list[str], note: str = ""
) -> Reference:
    doi = next((d for d in (_doi(v) for v in doi_values) if d), "")
    arxiv_id = _arxiv_id([doi, *texts]) if doi.lower().startswith("10.48550/") else ""
    arxiv_id = arxiv_id or _arxiv_id(texts)
    if doi.lower().startswith("10.48550/"):
        doi = ""  # arXiv's own DOI names the preprint: matched by its id, not as a DOI
    return Reference(
        title=" ".join(title.split()), arxiv_id=arxiv_id, doi=doi, key=key, note=note.strip()
    )


def _too_many_blocks(count: int) -> UnreadableFile:
    return UnreadableFile(
        f"The file holds {count:,} blocks, more than the {IMPORT_MAX_BLOCKS:,} an import reads;"
        " export fewer references at a time."
    )


def _deadline_passed(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise UnreadableFile(
            f"The file took longer than {IMPORT_PARSE_SECONDS:g} s to read; export fewer "
            "references at a time."
        )


def _bibtex_chunks(text: str) -> list[str]:
    """The text cut at blocks that start a line, PARSE_CHUNK_BLOCKS blocks a piece."""
    starts = [m.start() for m in _BIBTEX_LINE_BLOCK.finditer(text)]
    cuts = [0, *starts[PARSE_CHUNK_BLOCKS::PARSE_CHUNK_BLOCKS], len(text)]
    return [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if a < b]


def references_from_bibtex(text: str) -> ParsedFile:
    if (blocks := len(_BIBTEX_BLOCK.findall(text))) > IMPORT_MAX_BLOCKS:
        raise _too_many_blocks(blocks)
    parsed = ParsedFile()
    deadline = time.monotonic() + IMPORT_PARSE_SECONDS
    for chunk in _bibtex_chunks(text):
        library = bibtexparser.parse_string(chunk)
        for block in library.failed_blocks:
            # The block's first characters say which one it is; its line would be the chunk's.
            start = " ".join((block.raw or "")[:60].split())
            parsed.failed(f"{start!r}: not a BibTeX entry ({type(block.error).__name__})")
        parsed.references += [_bibtex_reference(entry) for entry in library.entries]
        _deadline_passed(deadline)
    return parsed


def _bibtex_reference(entry) -> Reference:
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
    return _reference(
        title=_case_braces_dropped(fields.get("title", "")),
        key=entry.key,
        doi_values=[fields.get("doi", "")],
        texts=[t for t in texts if t],
        note=fields.get("annote", ""),
    )


def _ris_entries(text: str) -> list[str]:
    """Each entry's text, from its TY line to the next, ended by an ER line if it has none
    (rispy drops an entry without one, and fails on two TY lines in a row)."""
    starts = [m.start() for m in _RIS_START.finditer(text)]
    if len(starts) > IMPORT_MAX_BLOCKS:
        raise _too_many_blocks(len(starts))
    pieces = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=False)]
    return [p if _RIS_END.search(p) else p.rstrip("\r\n") + "\nER  - \n" for p in pieces]


def references_from_ris(text: str) -> ParsedFile:
    parsed = ParsedFile()
    deadline = time.monotonic() + IMPORT_PARSE_SECONDS
    for number, piece in enumerate(_ris_entries(text), start=1):
        try:
            entries = rispy.loads(piece, skip_unknown_tags=True, enforce_list_tags=False)
        except Exception as exc:  # noqa: BLE001 (rispy fails on odd input with any error)
            parsed.failed(f"entry {number}: {type(exc).__name__}: {str(exc)[:100]}")
            continue
        parsed.references += [_ris_reference(entry) for entry in entries]
        if number % PARSE_CHUNK_BLOCKS == 0:
            _deadline_passed(deadline)
    return parsed


def _ris_reference(entry: dict) -> Reference:
    title = next(iter(_ris_values(entry, "title", "primary_title", "translated_title")), "")
    return _reference(
        title=title,
        key=next(iter(_ris_values(entry, "id")), ""),
        doi_values=_ris_values(entry, "doi"),
        # Our own exports' N1 lines say what the export holds, not what the reader thinks.
        note="\n".join(n for n in _ris_values(entry, "notes") if not _EXPORT_NOTE.match(n)),
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


def _ris_values(entry: dict, *names: str) -> list[str]:
    out: list[str] = []
    for name in names:
        value = entry.get(name)
        if isinstance(value, list):
            out += [str(v) for v in value]
        elif value:
            out.append(str(value))
    return out


def text_cleaned(text: str) -> str:
    """A file's text without control characters (NUL among them, which PostgreSQL cannot keep):
    taken out before it is stored or read."""
    return _CONTROL.sub("", text)


def references_read(text: str, *, filename: str = "") -> ParsedFile:
    """The entries of a BibTeX or RIS file (told apart by the name's extension, else by the
    text: RIS lines start with a two-letter tag), and those that could not be read."""
    text = text_cleaned(text)
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
    by_doi = papers_by_doi((r.doi for r in references if r.doi), held)
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
    # Searched as written, accents and all (G{\\"o}del as Gödel): an engine that keeps accents
    # in its index (PostgreSQL's) would not find "godel"; compared once folded.
    readable = _TEXT_MODE.latex_to_text(title) if "\\" in title else title
    words = " ".join(re.sub(r"[^\w\s-]+", " ", readable).split()[:30]) or wanted
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
        raise LibraryError("That list is not yours.")
    try:
        parsed = references_read(text, filename=filename)
    except UnreadableFile as exc:
        return ImportReport(error=str(exc))
    references = parsed.references
    skipped = max(len(references) - IMPORT_MAX_ENTRIES, 0)
    report = references_match(references[:IMPORT_MAX_ENTRIES])
    report.entries_skipped = skipped
    report.unreadable, report.unreadable_count = parsed.unreadable, parsed.unreadable_count
    papers = list({paper.pk: paper for _, paper, _ in report.matched}.values())
    notes = {paper.pk: reference.note for reference, paper, _ in report.matched if reference.note}
    report.added = papers_save(reading_list=reading_list, papers=papers, notes=notes)
    return report


def papers_save(
    *, reading_list: ReadingList, papers: Sequence[Paper], notes: dict[int, str] | None = None
) -> int:
    """Save many papers into a list at once (an import): one insert, papers already in it are
    left as they are, but for `notes` (paper id → note, from the file), written where the saved
    paper has none (a note the reader wrote here is never replaced). Returns how many were
    added."""
    before = SavedPaper.objects.filter(reading_list=reading_list).count()
    SavedPaper.objects.bulk_create(
        [SavedPaper(reading_list=reading_list, paper=paper) for paper in papers],
        batch_size=500,
        ignore_conflicts=True,
    )
    notes = {pk: note[:NOTE_MAX_CHARS] for pk, note in (notes or {}).items() if note.strip()}
    if notes:
        noted = list(
            SavedPaper.objects.filter(reading_list=reading_list, paper_id__in=notes, note="")
        )
        for saved in noted:
            saved.note = notes[saved.paper_id]
        SavedPaper.objects.bulk_update(noted, ["note"], batch_size=500)
    return SavedPaper.objects.filter(reading_list=reading_list).count() - before
