"""The public arXiv metadata snapshot (JSON lines): a streaming reader and a line parser."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

import orjson

from ..authors import (
    AuthorName,
    author_list_cleaned,
    decode_name,
    decode_tex,
    separate_tex_macros,
    split_authors,
)
from .records import (
    PaperRecord,
    RecordError,
    clean_text,
    normalize_arxiv_id,
    parse_version_date,
)


@dataclass(slots=True)
class SnapshotLine:
    line_number: int
    text: str


def open_snapshot(path: str | Path) -> io.TextIOBase:
    """Open a snapshot file, plain or gzipped (sniffed by magic bytes, not by name)."""
    path = Path(path)
    with path.open("rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return path.open("r", encoding="utf-8", errors="replace")


def iter_snapshot_lines(path: str | Path) -> Iterator[SnapshotLine]:
    with open_snapshot(path) as handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                yield SnapshotLine(number, text)


def iter_snapshot_bytes(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """(line number, the line's bytes) of each non-blank line: what the import parses.

    The bytes go to orjson as they are, which reads UTF-8 itself: decoding every line to str
    first (a text wrapper) and having orjson take the str back to UTF-8 cost the import ~10 us
    a record. A line that is not valid UTF-8 is decoded with replacement characters by
    parse_snapshot_line, as the text reader did. Lines end at "\n" only (a lone "\r", which
    no JSON line holds outside a string, does not split one).
    """
    path = Path(path)
    with path.open("rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        # GzipFile refills its buffer 8 KB at a time through Python code; 1 MB pieces make
        # that overhead vanish beside the inflating itself.
        handle: BinaryIO = io.BufferedReader(gzip.GzipFile(path, "rb"), buffer_size=1 << 20)
    else:
        handle = path.open("rb", buffering=1 << 20)
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.isspace():
                yield number, line


def line_text(line: bytes | str) -> str:
    """A line as text, for messages and the rejected-records log."""
    return line if isinstance(line, str) else line.decode("utf-8", errors="replace")


# One check per field of arXiv's snapshot, each with its own message, read top to bottom.
def parse_snapshot_line(text: str | bytes) -> PaperRecord:  # noqa: C901
    """Parse one snapshot line (text, or UTF-8 bytes) into a PaperRecord; raise RecordError
    saying what is wrong."""
    try:
        # orjson reads a line in ~70% of the standard library's time, building the same objects.
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        # The standard library says where a line breaks in the words the rejected-records log
        # has always used, and accepts what orjson refuses but is no error here (NaN, and
        # bytes that are not UTF-8, read with replacement characters).
        try:
            data = json.loads(line_text(text))
        except json.JSONDecodeError as exc:
            raise RecordError(f"invalid JSON: {exc.msg} at column {exc.colno}") from exc
    if not isinstance(data, dict):
        raise RecordError("a line must hold a JSON object")
    if "id" not in data:
        raise RecordError("missing field 'id'")
    arxiv_id = normalize_arxiv_id(str(data["id"]))

    versions = data.get("versions") or []
    if not isinstance(versions, list):
        raise RecordError(f"{arxiv_id}: 'versions' must be a list")
    published = None
    version_number = 1
    if versions:
        first = versions[0]
        if not isinstance(first, dict) or "created" not in first:
            raise RecordError(f"{arxiv_id}: malformed 'versions' entry")
        published = parse_version_date(first["created"])
        last = versions[-1]
        label = str(last.get("version", "v1")) if isinstance(last, dict) else "v1"
        digits = label.lstrip("v")
        version_number = int(digits) if digits.isdigit() else len(versions)

    updated = None
    if data.get("update_date"):
        try:
            updated = date.fromisoformat(str(data["update_date"]))
        except ValueError as exc:
            raise RecordError(f"{arxiv_id}: bad update_date {data['update_date']!r}") from exc

    # Glued macros ("S\\lawianowski") separated before the byline is split or decoded, as
    # the OAI records' bylines are (papers.authors.separate_tex_macros).
    authors_raw = separate_tex_macros(clean_text(data.get("authors")))
    parsed = data.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        authors: list[AuthorName] = []
        append = authors.append
        for entry in parsed:
            # Type checks and the cache lookup fused: this loop runs for every author in arXiv.
            if entry.__class__ is not list or not entry:
                raise RecordError(f"{arxiv_id}: malformed 'authors_parsed' entry {entry!r}")
            try:
                append(_parsed_author(*entry[:3]))
            except (TypeError, AttributeError):  # a number or a list where a name should be
                raise RecordError(
                    f"{arxiv_id}: malformed 'authors_parsed' entry {entry!r}"
                ) from None
        # arXiv's own split reads affiliations and notes as names as well.
        authors = author_list_cleaned(authors)
    else:
        authors = split_authors(authors_raw)

    return PaperRecord.from_arxiv_fields(
        data,
        arxiv_id=arxiv_id,
        authors_raw=decode_byline(authors_raw),
        authors=authors,
        version=version_number,
        published=published,
        updated=updated,
    )


def decode_byline(byline: str) -> str:
    """decode_tex for a whole byline, one name at a time.

    Same result as decoding it in one piece, but each name goes through decode_tex's cache:
    LaTeX decoding costs milliseconds, and a byline is nearly always new while the names in it
    recur. Commas inside braces or math stay with their piece, so a group is never cut.
    """
    if "\\" not in byline and "{" not in byline and "~" not in byline:
        return byline
    pieces: list[str] = []
    depth, math, start = 0, False, 0
    for index, char in enumerate(byline):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "$":
            math = not math
        elif char == "," and depth == 0 and not math:
            pieces.append(byline[start:index])
            start = index + 1
    if depth != 0 or math:  # unbalanced: let decode_tex handle the whole of it
        return decode_tex(byline)
    pieces.append(byline[start:])
    decoded = []
    for piece in pieces:
        core = piece.strip()
        text = decode_tex(core)
        if text and core:
            text = piece[: len(piece) - len(piece.lstrip())] + text
            text += piece[len(piece.rstrip()) :]
        decoded.append(text)
    return " ".join(",".join(decoded).split())


@lru_cache(maxsize=1 << 17)
def _parsed_author(
    keyname: str | None, forenames: str | None = "", suffix: str | None = ""
) -> AuthorName:
    """One `authors_parsed` entry (None reads as ""); cached because the same people sign many
    papers. Anything but text in it raises TypeError or AttributeError."""
    return AuthorName(
        keyname=decode_name(" ".join(keyname.split())) if keyname is not None else "",
        forenames=decode_name(" ".join(forenames.split())) if forenames is not None else "",
        suffix=decode_name(" ".join(suffix.split())) if suffix is not None else "",
    )
