"""Citation exports: BibTeX, RIS and CSL-JSON for any bounded set of papers.

Plain functions from Paper rows to text. `citation_entries` reads the papers' author names in one
query and gives each paper its key; the three writers turn those entries into one format each.

An arXiv paper is cited as arXiv asks (`eprint`, `archivePrefix = {arXiv}`, `primaryClass`);
once a journal reference or a DOI is known the entry is the published article, still carrying
its arXiv id. A journal reference is arXiv's free text ("Phys. Rev. D 97, 052003 (2018)"): it is
given as the venue as written, never split into a guessed volume and pages.

Keys are the first author's family name, the year and the first word of the title, folded to
ASCII (`vaswani2017attention`); papers that would share one key all get a letter, in arXiv id
order (`smith2020deepa`, `smith2020deepb`), so the same set of papers always gets the same keys
whatever order it is shown in.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import bibtexparser
import rispy
from bibtexparser.model import Entry, Field, ImplicitComment
from django.conf import settings
from django.db.models import Q
from django.http import HttpResponse
from django.utils.cache import patch_cache_control

from ..models import Authorship, Paper
from .latex import balanced_braces, latex_safe

# Names past this position are written "and others": one ATLAS paper has ~3,000 authors, and a
# researcher's export of collaboration papers would otherwise read millions of rows.
AUTHORS_MAX = 100
_TITLE_STOPWORDS = frozenset({"a", "an", "the", "on", "of", "in", "for", "to", "and", "at", "by"})
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_JOURNAL_YEAR = re.compile(r"\((\d{4})\)")
# Letters Unicode does not decompose into a base letter and an accent, so NFKD keeps them whole.
_NO_DECOMPOSITION = str.maketrans(
    {
        "ø": "o",
        "Ø": "O",
        "ł": "l",
        "Ł": "L",
        "đ": "d",
        "Đ": "D",
        "ð": "d",
        "Ð": "D",
        "ı": "i",
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "þ": "th",
        "Þ": "Th",
    }
)
_TEX_MATH = re.compile(r"\$[^$]*\$")


@dataclass(frozen=True)
class AuthorName:
    family: str
    given: str = ""
    # A collaboration or consortium: cited whole, never split into family and given names.
    literal: str = ""


@dataclass(frozen=True)
class CitationEntry:
    key: str
    paper: Paper
    authors: tuple[AuthorName, ...]
    more_authors: bool
    # The reader's own note on the paper, in the exports of their own lists.
    reader_note: str = ""

    @property
    def is_published(self) -> bool:
        return bool(self.paper.journal_ref or self.paper.doi)

    @property
    def year(self) -> int | None:
        match = _JOURNAL_YEAR.findall(self.paper.journal_ref) if self.paper.journal_ref else []
        if match:
            return int(match[-1])
        return self.paper.published.year if self.paper.published else None


def citation_entries(
    papers: Sequence[Paper], notes: dict[int, str] | None = None
) -> list[CitationEntry]:
    """The papers as entries, in the order given, with keys unique among them. One query reads
    the first AUTHORS_MAX + 1 names of every paper (the (paper, position) unique index)."""
    names: dict[int, list[Authorship]] = defaultdict(list)
    if papers:
        rows = Authorship.objects.filter(
            Q(paper_id__in=[p.pk for p in papers]) & Q(position__lte=AUTHORS_MAX + 1)
        ).order_by("paper_id", "position")
        for row in rows.only(
            "paper_id", "position", "name", "keyname", "forenames", "suffix", "is_person"
        ):
            names[row.paper_id].append(row)
    authors = {}
    for paper in papers:
        listed = names[paper.pk]
        authors[paper.pk] = (
            tuple(_author_name(a) for a in listed[:AUTHORS_MAX]),
            len(listed) > AUTHORS_MAX,
        )
    keys = _unique_keys(papers, {pk: listed for pk, (listed, _) in authors.items()})
    return [
        CitationEntry(
            key=keys[paper.pk],
            paper=paper,
            authors=authors[paper.pk][0],
            more_authors=authors[paper.pk][1],
            reader_note=(notes or {}).get(paper.pk, ""),
        )
        for paper in papers
    ]


def _author_name(authorship: Authorship) -> AuthorName:
    if not authorship.is_person:
        return AuthorName(family="", literal=authorship.name)
    family = authorship.keyname
    if authorship.suffix and family:
        family = f"{family} {authorship.suffix}"
    if family:
        return AuthorName(family=family, given=authorship.forenames)
    head, _, last = authorship.name.rpartition(" ")
    return AuthorName(family=last or authorship.name, given=head)


def _ascii_word(text: str) -> str:
    folded = (
        unicodedata.normalize("NFKD", text.translate(_NO_DECOMPOSITION))
        .encode("ascii", "ignore")
        .decode()
    )
    return re.sub(r"[^A-Za-z0-9]", "", folded).lower()


def _base_key(paper: Paper, authors: tuple[AuthorName, ...]) -> str:
    first = authors[0] if authors else None
    name = _ascii_word((first.family or first.literal.split(" ")[0]) if first else "")
    year = str(paper.published.year) if paper.published else ""
    word = ""
    for candidate in _TEX_MATH.sub(" ", paper.title).split():
        cleaned = _ascii_word(re.sub(r"\\[A-Za-z]+", "", candidate))
        if cleaned and cleaned not in _TITLE_STOPWORDS and not cleaned.isdigit():
            word = cleaned
            break
    key = f"{name}{year}{word}"
    return key if name else f"arxiv{_ascii_word(paper.arxiv_id)}{word}"


def _letters(index: int) -> str:
    """0 → a, 25 → z, 26 → aa: as many suffixes as an export needs."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(ord("a") + rest) + out
    return out


def _unique_keys(
    papers: Sequence[Paper], authors: dict[int, tuple[AuthorName, ...]]
) -> dict[int, str]:
    groups: dict[str, list[Paper]] = defaultdict(list)
    for paper in papers:
        groups[_base_key(paper, authors[paper.pk])].append(paper)
    keys: dict[int, str] = {}
    taken = {base for base, group in groups.items() if len(group) == 1}
    for base, group in groups.items():
        if len(group) == 1:
            keys[group[0].pk] = base
            continue
        index = 0
        for paper in sorted(group, key=lambda p: p.arxiv_id):
            while f"{base}{_letters(index)}" in taken:
                index += 1
            keys[paper.pk] = f"{base}{_letters(index)}"
            taken.add(keys[paper.pk])
            index += 1
    return keys


# BibTeX


def _bibtex_value(text: str) -> str:
    return latex_safe(text)


def _bibtex_name(author: AuthorName) -> str:
    if author.literal:
        return "{" + _bibtex_value(author.literal) + "}"
    family = _bibtex_value(author.family)
    # A family name of several words ("van der Berg", "Garcia Lopez") stays one family name.
    family = "{" + family + "}" if " " in family or "," in family else family
    return f"{family}, {_bibtex_value(author.given)}" if author.given else family


def _bibtex_fields(entry: CitationEntry) -> list[Field]:
    paper = entry.paper
    names = [_bibtex_name(a) for a in entry.authors]
    if entry.more_authors:
        names.append("others")
    fields = [Field("title", _bibtex_value(paper.title)), Field("author", " and ".join(names))]
    if paper.journal_ref:
        fields.append(Field("journal", _bibtex_value(paper.journal_ref)))
    if entry.year:
        fields.append(Field("year", str(entry.year)))
    if paper.published and not paper.journal_ref:
        month = Field("month", _MONTHS[paper.published.month - 1])
        month.enclosing = "no-enclosing"  # BibTeX's month macro, which every style reads
        fields.append(month)
    dois = paper.doi_list
    if dois:
        # A verbatim field in biblatex: one DOI, as registered.
        fields.append(Field("doi", balanced_braces(dois[0])))
    if len(dois) > 1:
        fields.append(Field("note", "Also DOI " + ", ".join(latex_safe(d) for d in dois[1:])))
    fields += [Field("eprint", paper.arxiv_id), Field("archivePrefix", "arXiv")]
    if entry.reader_note:
        # Where reference managers (Zotero, JabRef) keep a reader's own note.
        fields.append(Field("annote", latex_safe(entry.reader_note)))
    if paper.primary_category:
        fields.append(Field("primaryClass", paper.primary_category))
    fields.append(Field("url", paper.abs_url))
    return fields


_BIBTEX_FORMAT = bibtexparser.BibtexFormat()
_BIBTEX_FORMAT.indent = "  "


def to_bibtex(entries: Sequence[CitationEntry], *, note: str = "") -> str:
    """BibTeX, written by bibtexparser: @article for a paper with a journal reference, @misc
    for a preprint (a DOI alone names no journal, which @article requires), arXiv's eprint
    fields on both. `note` becomes a comment at the top (e.g. that the export was cut)."""
    library = bibtexparser.Library()
    for line in note.splitlines():
        library.add(ImplicitComment(f"% {line}"))
    for entry in entries:
        kind = "article" if entry.paper.journal_ref else "misc"
        library.add(Entry(kind, entry.key, _bibtex_fields(entry)))
    return bibtexparser.write_string(library, bibtex_format=_BIBTEX_FORMAT)


# RIS (https://en.wikipedia.org/wiki/RIS_(file_format)): tagged lines ending CR LF, written by
# rispy from one dict of rispy's field names per record.


class _RisWriter(rispy.RisWriter):
    NEWLINE = "\r\n"  # as the RIS specification has it; rispy writes "\n"

    def set_header(self, count: int) -> str:
        return ""  # rispy numbers its records ("1."), which the RIS specification does not


def _ris_value(value: str) -> str:
    # One line per tag: a newline inside an abstract would start a line of no tag.
    return " ".join(value.split())


def _ris_record(entry: CitationEntry, note: str) -> dict:
    paper = entry.paper
    record: dict = {
        "type_of_reference": "JOUR" if entry.is_published else "GEN",
        "id": entry.key,
        "title": paper.title,
        "authors": [
            author.literal
            or (f"{author.family}, {author.given}" if author.given else author.family)
            for author in entry.authors
        ],
    }
    if entry.year:
        record["year"] = str(entry.year)
    if paper.published:
        # RIS writes an unknown day as an empty part (YYYY/MM//).
        day = "" if paper.published_month_only else paper.published.strftime("%d")
        record["date"] = paper.published.strftime("%Y/%m/") + f"{day}/"
    if paper.journal_ref:
        record["journal_name"] = paper.journal_ref
    dois = paper.doi_list
    if dois:
        record["doi"] = dois[0]
    record["urls"] = [paper.abs_url]
    record["accession_number"] = f"arXiv:{paper.arxiv_id}"
    record["name_of_database"] = "arXiv"
    record["keywords"] = list(paper.category_list)
    if paper.abstract:
        record["abstract"] = paper.abstract
    record["notes"] = _ris_notes(entry, note)
    return {
        field: [_ris_value(v) for v in value] if isinstance(value, list) else _ris_value(value)
        for field, value in record.items()
    }


def _ris_notes(entry: CitationEntry, note: str) -> list[str]:
    """The record's N1 lines: other DOIs, a cut byline, the export's note, the reader's note."""
    notes = [f"Also DOI {other}" for other in entry.paper.doi_list[1:]]
    if entry.more_authors:
        notes.append(f"First {AUTHORS_MAX} authors listed.")
    return [*notes, *(text for text in (note, entry.reader_note) if text)]


def to_ris(entries: Sequence[CitationEntry], *, note: str = "") -> str:
    """RIS: TY JOUR for a published paper, GEN (generic: the spec has no preprint type) for a
    preprint; the arXiv id as accession number (AN) in database (DB) arXiv. RIS has no comment
    line, so `note` goes to each record's N1 (notes)."""
    return rispy.dumps([_ris_record(e, note) for e in entries], implementation=_RisWriter)


# CSL-JSON (https://citeproc-js.readthedocs.io/en/latest/csl-json/markup.html)


def csl_items(entries: Sequence[CitationEntry]) -> list[dict]:
    """CSL-JSON items: article-journal once published, else article from publisher arXiv; the
    arXiv id as `number` in `archive` arXiv either way."""
    items = []
    for entry in entries:
        paper = entry.paper
        authors: list[dict] = [
            {"literal": a.literal} if a.literal else {"family": a.family, "given": a.given}
            for a in entry.authors
        ]
        item: dict = {
            "id": entry.key,
            "type": "article-journal" if entry.is_published else "article",
            "title": paper.title,
            "author": authors,
            "URL": paper.abs_url,
            "number": paper.arxiv_id,
            "archive": "arXiv",
        }
        if entry.year:
            item["issued"] = {"date-parts": [[entry.year]]}
            if paper.published and not paper.journal_ref:
                published = paper.published
                parts = [published.year, published.month]
                if not paper.published_month_only:
                    parts.append(published.day)
                item["issued"] = {"date-parts": [parts]}
        if paper.journal_ref:
            item["container-title"] = paper.journal_ref
        else:
            item["publisher"] = "arXiv"
        dois = paper.doi_list
        notes = []
        if dois:
            item["DOI"] = dois[0]
            notes += [f"Also DOI {other}" for other in dois[1:]]
        if entry.reader_note:
            notes.append(entry.reader_note)
        if entry.more_authors:
            # CSL has no "and others" name: the styles add "et al." from a long list themselves.
            notes.append(f"First {AUTHORS_MAX} authors listed.")
        if notes:
            item["note"] = " ".join(notes)
        if paper.abstract:
            item["abstract"] = paper.abstract
        items.append(item)
    return items


def to_csl_json(entries: Sequence[CitationEntry], *, note: str = "") -> str:
    """CSL-JSON is a bare array of items: it has no place for a note, which the views send in
    a header instead."""
    return json.dumps(csl_items(entries), ensure_ascii=False, indent=2) + "\n"


@dataclass(frozen=True)
class CitationFormat:
    extension: str
    content_type: str
    write: Callable[..., str]


# Keyed by the file extension the export URLs end with.
CITATION_FORMATS = {
    "bib": CitationFormat("bib", "application/x-bibtex", to_bibtex),
    "ris": CitationFormat("ris", "application/x-research-info-systems", to_ris),
    "json": CitationFormat("json", "application/vnd.citationstyles.csl+json", to_csl_json),
}


def citation_response(
    papers: list[Paper],
    *,
    extension: str,
    filename: str,
    cut_note: str = "",
    notes: dict[int, str] | None = None,
) -> HttpResponse:
    """A citation export as a download. `cut_note` says the export holds fewer papers than
    asked for: a comment in BibTeX, a note in RIS, and the X-Export-Note header in all three
    (CSL-JSON has no place for it)."""
    export_format = CITATION_FORMATS[extension]
    body = export_format.write(citation_entries(papers, notes), note=cut_note)
    response = HttpResponse(body, content_type=f"{export_format.content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}.{extension}"'
    if cut_note:
        response["X-Export-Note"] = cut_note
    # The same bytes for every reader, like the anonymous pages the page cache serves.
    patch_cache_control(response, public=True, max_age=settings.PAGE_CACHE_SECONDS)
    return response
