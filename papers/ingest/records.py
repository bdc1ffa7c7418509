"""The source-neutral shape of one arXiv paper, as every importer hands it to the upsert."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from wovepaper.lib.identifiers import arxiv_id_month, arxiv_id_parsed

from ..authors import AuthorName, decode_name
from .textmode import text_mode_to_unicode

# Paper.published_precision of a paper dated by the month its identifier names.
PUBLISHED_MONTH = "month"


class RecordError(ValueError):
    """A record that cannot be imported; the message says why, for the rejected-records log."""


def normalize_arxiv_id(raw: str) -> str:
    """Strip "arXiv:", an "oai:arXiv.org:" prefix and a version suffix; reject anything else."""
    value = arxiv_id_parsed(raw)
    if value:
        return value
    raise RecordError(f"not an arXiv identifier: {raw!r}")


@dataclass(slots=True)
class PaperRecord:
    arxiv_id: str
    title: str
    abstract: str = ""
    authors_raw: str = ""
    authors: list[AuthorName] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    version: int = 1
    published: datetime | None = None
    updated: date | None = None
    doi: str = ""
    journal_ref: str = ""
    comments: str = ""
    report_no: str = ""
    license: str = ""
    submitter: str = ""
    is_deleted: bool = False
    # "" where the record is arXiv's own; "s2" or "openalex" where arXiv's record is not at hand
    # and the title and byline are as that source lists them (Paper.record_source).
    record_source: str = ""

    def validate(self) -> None:
        if not self.title.strip():
            raise RecordError(f"{self.arxiv_id}: empty title")
        if not self.categories:
            raise RecordError(f"{self.arxiv_id}: no categories")
        if any(len(c) > 32 or " " in c for c in self.categories):
            raise RecordError(f"{self.arxiv_id}: malformed categories {self.categories!r}")

    @classmethod
    def from_arxiv_fields(
        cls,
        fields: Mapping[str, Any],
        *,
        arxiv_id: str,
        authors_raw: str,
        authors: list[AuthorName],
        version: int,
        published: datetime | None,
        updated: date | None,
    ) -> PaperRecord:
        """A valid record of arXiv's metadata fields, which its OAI records and its snapshot
        name alike (the submitter a name in TeX, as bylines are); the byline, versions and
        dates are read by each source."""
        record = cls(
            arxiv_id=arxiv_id,
            title=text_mode_to_unicode(clean_text(fields.get("title"))),
            abstract=text_mode_to_unicode(clean_abstract(fields.get("abstract"))),
            authors_raw=authors_raw,
            authors=authors,
            categories=clean_text(fields.get("categories")).split(),
            version=version,
            published=published,
            updated=updated,
            doi=clean_text(fields.get("doi")),
            journal_ref=clean_text(fields.get("journal-ref")),
            comments=clean_text(fields.get("comments")),
            report_no=clean_text(fields.get("report-no")),
            license=clean_text(fields.get("license")),
            submitter=decode_name(clean_text(fields.get("submitter"))),
        )
        record.validate()
        return record

    @property
    def is_withdrawn(self) -> bool:
        return "withdrawn" in self.comments.lower()[:200]

    def first_version_date(self) -> tuple[datetime | None, str | None]:
        """When version 1 appeared and how precisely that is known: the day the record gives
        (precision None), else the first day of the month the arXiv identifier names
        ("month"), so that no paper of the archive is undated."""
        if self.published is not None:
            return self.published, None
        month = arxiv_id_month(self.arxiv_id)
        if month is None:
            return None, None
        return datetime(month[0], month[1], 1, tzinfo=UTC), PUBLISHED_MONTH

    def digest(self) -> str:
        """A stable fingerprint of everything we store, so reruns can count "unchanged".

        Every field goes in (tests/papers/ingest/test_ingest_bulk.py changes each one and checks the
        digest moves), joined by ASCII separator characters \\x1c-\\x1f, which the text
        cleaners take out of every field: str.split() counts them as whitespace. This is on the
        hot path of every import, so it builds one string rather than serialising objects.
        """
        authors = "\x1e".join(
            f"{a.keyname}\x1f{a.forenames}\x1f{a.suffix}\x1f{a.affiliation}" for a in self.authors
        )
        text = "\x1d".join(
            (
                self.arxiv_id,
                self.title,
                self.abstract,
                self.authors_raw,
                authors,
                "\x1f".join(self.categories),
                str(self.version),
                self.published.isoformat() if self.published else "",
                self.updated.isoformat() if self.updated else "",
                self.doi,
                self.journal_ref,
                self.comments,
                self.report_no,
                self.license,
                self.submitter,
                "deleted" if self.is_deleted else "",
                # Appended only when set, so that arXiv's own records keep their digests.
                *((self.record_source,) if self.record_source else ()),
            )
        )
        return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def clean_text(value: str | None) -> str:
    """Fold arXiv's hard line wraps and indentation into single spaces."""
    # str.split() splits on exactly the characters re's \s matches in a str pattern, and is
    # several times faster than re.sub on the import's hot path.
    return " ".join((value or "").split())


_PARAGRAPH_BREAK = re.compile(r"\n\s{2,}(?=\S)")


def clean_abstract(value: str | None) -> str:
    """Keep paragraph breaks (arXiv marks them with an indented line) but unwrap the rest."""
    text = (value or "").strip("\n")
    paragraphs = _PARAGRAPH_BREAK.split(text.strip())
    return "\n\n".join(clean_text(p) for p in paragraphs if p.strip())


_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, start=1)}


def parse_version_date(value: str) -> datetime:
    """A version date as the snapshot and arXivRaw write it: "Mon, 2 Apr 2007 19:18:42 GMT"."""
    # Reading that one shape directly is several times cheaper than email.utils, which stays the
    # reference for anything else.
    parts = value.split() if isinstance(value, str) else ()
    if len(parts) == 6 and parts[5] == "GMT" and len(parts[3]) == 4 and parts[2] in _MONTHS:
        clock = parts[4].split(":")
        if len(clock) == 3:
            try:
                return datetime(
                    int(parts[3]),
                    _MONTHS[parts[2]],
                    int(parts[1]),
                    int(clock[0]),
                    int(clock[1]),
                    int(clock[2]),
                    tzinfo=UTC,
                )
            except ValueError:
                pass
    try:
        return parsedate_to_datetime(value)
    except (TypeError, ValueError) as exc:
        raise RecordError(f"unreadable version date {value!r}") from exc
