"""arXiv's OAI-PMH responses, parsed as a stream into PaperRecords.

Pure functions over bytes or a binary stream: no network, no database. `ListRecords` pages are
read with lxml's iterparse and every record element is cleared once turned into a PaperRecord,
so memory holds one page's records, never a page's tree.

Formats:
- `arXivRaw` (preferred): the version history gives the v1 (published) date and the version
  number; authors come as one raw byline that `papers.authors.split_authors` splits, with TeX
  accents decoded.
- `arXiv`: structured authors, but only the current version. Gotcha: on the legacy server
  (export.arxiv.org/oai2) `<created>` was the v1 date; since arXiv's 2025 rewrite it is the
  *current* version's date. So `created` is taken as the published date only from responses
  dated before 2025; on the current server the page says it carries no v1 date
  (`ListPage.has_published` is False) and the harvester keeps the date it already has.

Both resumption-token shapes are read: legacy (`cursor`, `completeListSize`, `NNN|offset`) and
current (`expirationDate`, or `expires` as arXiv's template writes it; an empty
`<resumptionToken/>` on the last page). OAI errors: `noRecordsMatch` is an empty page;
`badResumptionToken` raises BadResumptionToken; every other code raises OAIError.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import BinaryIO, NoReturn

from lxml import etree

from ..authors import (
    AuthorName,
    author_list_cleaned,
    decode_name,
    decode_tex,
    separate_tex_macros,
    split_authors,
)
from ..ingest.records import (
    PaperRecord,
    RecordError,
    clean_text,
    normalize_arxiv_id,
    parse_version_date,
)

OAI_NS = "http://www.openarchives.org/OAI/2.0/"
ARXIV_NS = "http://arxiv.org/OAI/arXiv/"
ARXIV_RAW_NS = "http://arxiv.org/OAI/arXivRaw/"
_O = f"{{{OAI_NS}}}"
METADATA_PREFIXES = ("arXivRaw", "arXiv")
# Conservative: the rewrite went live in 2025, and a response from any day of 2025 or later is
# treated as coming from the current server, whose `created` is not v1's date.
LEGACY_CREATED_IS_V1_BEFORE = datetime(2025, 1, 1, tzinfo=UTC)
RAW_EXCERPT = 2000


class OAIError(Exception):
    """An OAI-PMH `<error>` other than noRecordsMatch, or a response that is not OAI-PMH."""

    def __init__(self, code: str, message: str = ""):
        self.code = code
        self.message = message
        super().__init__(f"OAI-PMH error {code}: {message}" if message else f"OAI-PMH error {code}")


class BadResumptionToken(OAIError):
    """The token expired (arXiv's expire at the next 00:00 UTC) or was refused."""


class IdDoesNotExist(OAIError):
    pass


@dataclass(slots=True)
class ResumptionToken:
    value: str
    cursor: int | None = None
    complete_list_size: int | None = None
    expiration: datetime | None = None

    @property
    def is_last(self) -> bool:
        return not self.value


@dataclass(slots=True)
class Rejection:
    identifier: str
    reason: str
    raw: str = ""


@dataclass(slots=True)
class Header:
    identifier: str
    datestamp: date | None
    set_specs: list[str] = field(default_factory=list)
    is_deleted: bool = False


@dataclass
class ListPage:
    """One ListRecords response. `token` is None when the response had no token at all."""

    response_date: datetime | None = None
    records: list[PaperRecord] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    token: ResumptionToken | None = None
    no_records_match: bool = False
    # Header datestamps, to tell whether the server sends records in datestamp order.
    first_datestamp: date | None = None
    max_datestamp: date | None = None
    datestamps_ordered: bool = True
    has_published: bool = True
    has_version: bool = True

    @property
    def next_token(self) -> str:
        return self.token.value if self.token else ""

    @property
    def item_count(self) -> int:
        return len(self.records) + len(self.deleted) + len(self.rejected)


@dataclass(frozen=True, slots=True)
class ListSoFar:
    """What the pages of a list before the next one said: the next page is checked against it.

    `token` is the resumption token the next page is asked for with, `announced` the list's
    completeListSize as the latest page that gave one said, `received` the items taken so far.
    """

    token: str
    announced: int | None = None
    received: int = 0

    def after(self, page: ListPage) -> ListSoFar:
        """The list's state once `page` (the answer to this token) is taken."""
        announced = page.token.complete_list_size if page.token else None
        return ListSoFar(
            token=page.next_token,
            announced=self.announced if announced is None else announced,
            received=self.received + page.item_count,
        )

    @classmethod
    def first(cls, page: ListPage) -> ListSoFar:
        """The list's state once its first page is taken."""
        return cls(token="").after(page)


def list_page_problem(page: ListPage, so_far: ListSoFar | None) -> str | None:
    """Why `page` cannot be the next page of its list, or None when it can.

    `so_far` is None for a list's first request. OAI-PMH 2.0 (3.5): the answer to a
    resumption token always carries a resumptionToken element, empty on the last page; an
    empty list is the noRecordsMatch error, which only a first request can get; and a list
    that ends has delivered the completeListSize it announced. An answer breaking any of these
    is what a cut or misbehaving server sends (seen: 200 OK with no token, or an empty
    `<ListRecords/>`), and taking it would end the harvest early, with the rest of the list
    never fetched.
    """
    if so_far is not None and so_far.token:
        if page.no_records_match:
            return f"noRecordsMatch in answer to resumptionToken {so_far.token}"
        if page.token is None:
            found = f"{page.item_count} records" if page.item_count else "an empty list"
            return f"no resumptionToken in the answer to resumptionToken {so_far.token} ({found})"
    elif page.token is None and page.item_count == 0 and not page.no_records_match:
        return "an empty list without noRecordsMatch"
    if page.token is None or not page.token.is_last:
        return None
    announced = page.token.complete_list_size
    if announced is None and so_far is not None:
        announced = so_far.announced
    if page.token.cursor is not None:
        received = page.token.cursor + page.item_count
    else:
        received = (so_far.received if so_far else 0) + page.item_count
    if announced is not None and received < announced:
        return f"the list ended after {received} of the {announced} records it announced"
    return None


@dataclass
class HeaderPage:
    response_date: datetime | None = None
    headers: list[Header] = field(default_factory=list)
    token: ResumptionToken | None = None
    no_records_match: bool = False


@dataclass(slots=True)
class Identify:
    repository_name: str
    base_url: str
    protocol_version: str
    admin_emails: list[str]
    earliest_datestamp: str
    deleted_record: str
    granularity: str
    response_date: datetime | None = None


@dataclass(slots=True)
class OAISet:
    spec: str
    name: str


# ---------------------------------------------------------------------------------------------
# Small readers


def _text(elem) -> str:
    return elem.text or "" if elem is not None else ""


_LOCAL_NAMES: dict[str, str] = {}


def _local(tag) -> str:
    """Local name of a namespaced tag, memoised: a page has a few dozen distinct tags."""
    try:
        return _LOCAL_NAMES[tag]
    except (KeyError, TypeError):
        if not isinstance(tag, str):  # comments and processing instructions
            return ""
        name = _LOCAL_NAMES[tag] = tag.rpartition("}")[2]
        return name


def parse_oai_datetime(value: str) -> datetime:
    value = value.strip()
    try:
        if len(value) == 10:
            return datetime.combine(date.fromisoformat(value), datetime.min.time(), tzinfo=UTC)
        return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError as exc:
        raise RecordError(f"unreadable OAI date {value!r}") from exc


def _parse_date(value: str, what: str) -> date:
    try:
        return date.fromisoformat(value.strip()[:10])
    except ValueError as exc:
        raise RecordError(f"unreadable {what} {value!r}") from exc


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


def _parse_token(elem) -> ResumptionToken:
    expiration = elem.get("expirationDate") or elem.get("expires")
    try:
        expires_at = parse_oai_datetime(expiration) if expiration else None
    except RecordError:
        expires_at = None
    return ResumptionToken(
        # A token is opaque (arXiv's current ones are percent-encoded query strings): never
        # unescape it, only trim the whitespace pretty-printing may add around it.
        value=(elem.text or "").strip(),
        cursor=_int_or_none(elem.get("cursor")),
        complete_list_size=_int_or_none(elem.get("completeListSize")),
        expiration=expires_at,
    )


def _raise_for_error(code: str, message: str) -> NoReturn:
    if code == "badResumptionToken":
        raise BadResumptionToken(code, message)
    if code == "idDoesNotExist":
        raise IdDoesNotExist(code, message)
    raise OAIError(code, message)


def _no_records_match(error: tuple[str, str] | None) -> bool:
    """A list response's error: noRecordsMatch is an empty list, anything else is raised."""
    if error is None:
        return False
    if error[0] != "noRecordsMatch":
        _raise_for_error(*error)
    return True


def _iterparse(source: bytes | BinaryIO, tags: tuple[str, ...]):
    stream = io.BytesIO(source) if isinstance(source, (bytes, bytearray, memoryview)) else source
    # No entity expansion and no network: the body comes from outside.
    return etree.iterparse(
        stream,
        events=("end",),
        tag=tags,
        resolve_entities=False,
        no_network=True,
        huge_tree=False,
        remove_comments=True,
    )


def _check_root(context) -> None:
    root = getattr(context, "root", None)
    if root is None or root.tag != f"{_O}OAI-PMH":
        found = root.tag if root is not None else "nothing"
        raise OAIError("notOAIPMH", f"the response is not an OAI-PMH document (root: {found})")


def _release(elem) -> None:
    """Free a processed element and the siblings before it, so the tree never grows."""
    elem.clear(keep_tail=False)
    parent = elem.getparent()
    if parent is not None:
        while elem.getprevious() is not None:
            del parent[0]


# ---------------------------------------------------------------------------------------------
# Headers and records


def parse_header(elem) -> Header:
    identifier = ""
    datestamp = None
    sets: list[str] = []
    for child in elem:
        name = _local(child.tag)
        if name == "identifier":
            identifier = (child.text or "").strip()
        elif name == "datestamp":
            datestamp = _parse_date(child.text or "", "datestamp") if child.text else None
        elif name == "setSpec":
            sets.append((child.text or "").strip())
    return Header(
        identifier=identifier,
        datestamp=datestamp,
        set_specs=sets,
        is_deleted=elem.get("status") == "deleted",
    )


_A = f"{{{ARXIV_NS}}}"


def _authors_from_arxiv(authors_elem) -> list[AuthorName]:
    authors = []
    for author in authors_elem:
        keyname = decode_name(clean_text(author.findtext(f"{_A}keyname")))
        forenames = decode_name(clean_text(author.findtext(f"{_A}forenames")))
        if not keyname and not forenames:
            raise RecordError("an <author> without keyname or forenames")
        affiliations = [
            decode_name(clean_text(a.text)) for a in author.iterfind(f"{_A}affiliation")
        ]
        authors.append(
            AuthorName(
                keyname=keyname,
                forenames=forenames,
                suffix=decode_name(clean_text(author.findtext(f"{_A}suffix"))),
                affiliation="; ".join(a for a in affiliations if a),
            )
        )
    # arXiv's own split of the byline reads affiliations and notes as names as well.
    return author_list_cleaned(authors)


def _version_number(label: str | None) -> int:
    digits = (label or "").strip().lstrip("v")
    if not digits.isdigit():
        raise RecordError(f"unreadable version label {label!r}")
    return int(digits)


def _record_from_metadata(meta, header: Header, *, created_is_v1: bool) -> PaperRecord:
    ns, _, root_name = meta.tag.rpartition("}")
    ns = ns.lstrip("{")
    if ns not in (ARXIV_NS, ARXIV_RAW_NS):
        raise RecordError(f"unsupported metadata format {root_name!r} ({ns})")
    fields: dict[str, str] = {}
    authors: list[AuthorName] = []
    authors_raw = ""
    versions: list[tuple[int, datetime]] = []
    for child in meta:
        name = _local(child.tag)
        if name == "authors":
            if ns == ARXIV_NS:
                authors = _authors_from_arxiv(child)
            else:
                authors_raw = child.text or ""
        elif name == "version":
            number = _version_number(child.get("version"))
            date_elem = child.find(f"{{{ns}}}date")
            raw_date = clean_text(_text(date_elem))
            try:
                versions.append((number, parse_version_date(raw_date).astimezone(UTC)))
            except RecordError as exc:
                raise RecordError(f"unreadable date {raw_date!r} of version v{number}") from exc
        elif name:
            fields[name] = child.text or ""

    raw_id = fields.get("id", "").strip()
    arxiv_id = normalize_arxiv_id(raw_id)
    if (
        header.identifier
        and header.identifier != f"oai:arXiv.org:{raw_id}"
        and normalize_arxiv_id(header.identifier) != arxiv_id
    ):
        raise RecordError(f"header identifier {header.identifier!r} does not match id {arxiv_id!r}")

    published = None
    version = 1
    if ns == ARXIV_RAW_NS:
        if not versions:
            raise RecordError(f"{arxiv_id}: no <version> in the arXivRaw record")
        versions.sort()
        published = versions[0][1]
        version = versions[-1][0]
        authors_clean = separate_tex_macros(clean_text(authors_raw))
        authors = split_authors(authors_clean)
        authors_raw = decode_tex(authors_clean)
    else:
        if created_is_v1 and fields.get("created"):
            created = _parse_date(fields["created"], "created date")
            published = datetime.combine(created, datetime.min.time(), tzinfo=UTC)
        authors_raw = ", ".join(a.display for a in authors)

    return PaperRecord.from_arxiv_fields(
        fields,
        arxiv_id=arxiv_id,
        authors_raw=authors_raw,
        authors=authors,
        version=version,
        published=published,
        updated=header.datestamp,
    )


def _raw_excerpt(elem) -> str:
    try:
        return etree.tostring(elem, encoding="unicode")[:RAW_EXCERPT]
    except (ValueError, TypeError):
        return ""


def _parse_record_elem(elem, page: ListPage, *, created_is_v1: bool) -> None:
    """Turn one <record> into a PaperRecord, a deletion or a rejection on `page`."""
    header_elem = elem.find(f"{_O}header")
    identifier = ""
    try:
        if header_elem is None:
            raise RecordError("record without <header>")
        header = parse_header(header_elem)
        identifier = header.identifier
        _note_datestamp(page, header.datestamp)
        if header.is_deleted:
            page.deleted.append(normalize_arxiv_id(header.identifier))
            return
        metadata = elem.find(f"{_O}metadata")
        meta = next(iter(metadata), None) if metadata is not None else None
        if meta is None:
            raise RecordError("record without <metadata>")
        page.records.append(_record_from_metadata(meta, header, created_is_v1=created_is_v1))
    except RecordError as exc:
        page.rejected.append(
            Rejection(
                identifier=identifier or "(no identifier)", reason=str(exc), raw=_raw_excerpt(elem)
            )
        )


def _note_datestamp(page: ListPage, datestamp: date | None) -> None:
    if datestamp is None:
        return
    if page.first_datestamp is None:
        page.first_datestamp = datestamp
    if page.max_datestamp is not None and datestamp < page.max_datestamp:
        page.datestamps_ordered = False
    if page.max_datestamp is None or datestamp > page.max_datestamp:
        page.max_datestamp = datestamp


# ---------------------------------------------------------------------------------------------
# Responses


def parse_list_records(source: bytes | BinaryIO, *, metadata_prefix: str = "arXivRaw") -> ListPage:
    """Parse one ListRecords response (or GetRecord: same record shape) as a stream.

    Malformed records land in `page.rejected` with their identifier and reason; the rest of the
    page is unaffected. Raises lxml.etree.XMLSyntaxError when the document itself is broken
    (a truncated body: the caller retries), OAIError/BadResumptionToken for OAI errors.
    """
    page = ListPage(has_version=metadata_prefix == "arXivRaw")
    created_is_v1 = False
    for elem in _list_elements(source, f"{_O}record", page):
        if elem.tag == f"{_O}record":
            _parse_record_elem(elem, page, created_is_v1=created_is_v1)
        else:
            try:
                page.response_date = parse_oai_datetime(elem.text or "")
            except RecordError as exc:
                raise OAIError("badResponse", str(exc)) from exc
            created_is_v1 = page.response_date < LEGACY_CREATED_IS_V1_BEFORE
    page.has_published = metadata_prefix == "arXivRaw" or created_is_v1
    return page


def parse_get_record(source: bytes | BinaryIO, *, metadata_prefix: str = "arXivRaw") -> ListPage:
    """GetRecord has the ListRecords record shape: the one record, deletion or rejection."""
    return parse_list_records(source, metadata_prefix=metadata_prefix)


def parse_list_identifiers(source: bytes | BinaryIO) -> HeaderPage:
    page = HeaderPage()
    for elem in _list_elements(source, f"{_O}header", page):
        if elem.tag == f"{_O}header":
            page.headers.append(parse_header(elem))
        else:
            page.response_date = parse_oai_datetime(elem.text or "")
    return page


def _list_elements(
    source: bytes | BinaryIO, item: str, page: ListPage | HeaderPage
) -> Iterator[etree._Element]:
    """A list response's `item` elements and its responseDate, as they stream in (each item
    released once its caller is done with it); the resumption token and whether the request
    matched no records go on `page`. The first OAI error is the one that counts."""
    error: tuple[str, str] | None = None
    context = _iterparse(source, (f"{_O}responseDate", item, f"{_O}resumptionToken", f"{_O}error"))
    for _event, elem in context:
        if elem.tag == f"{_O}resumptionToken":
            page.token = _parse_token(elem)
        elif elem.tag == f"{_O}error":
            if error is None:
                error = (elem.get("code") or "unknown", clean_text(elem.text))
        else:
            yield elem
            if elem.tag == item:
                _release(elem)
    _check_root(context)
    page.no_records_match = _no_records_match(error)


def _parse_small(source: bytes) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True)
    root = etree.fromstring(source, parser=parser)
    if root.tag != f"{_O}OAI-PMH":
        raise OAIError("notOAIPMH", f"the response is not an OAI-PMH document (root: {root.tag})")
    error = root.find(f"{_O}error")
    if error is not None:
        _raise_for_error(error.get("code") or "unknown", clean_text(error.text))
    return root


def parse_identify(source: bytes) -> Identify:
    root = _parse_small(source)
    node = root.find(f"{_O}Identify")
    if node is None:
        raise OAIError("badResponse", "no <Identify> element")

    def get(name: str) -> str:
        return clean_text(_text(node.find(f"{_O}{name}")))

    response_date = root.findtext(f"{_O}responseDate")
    return Identify(
        repository_name=get("repositoryName"),
        base_url=get("baseURL"),
        protocol_version=get("protocolVersion"),
        admin_emails=[clean_text(e.text) for e in node.findall(f"{_O}adminEmail")],
        earliest_datestamp=get("earliestDatestamp"),
        deleted_record=get("deletedRecord"),
        granularity=get("granularity"),
        response_date=parse_oai_datetime(response_date) if response_date else None,
    )


def parse_list_sets(source: bytes) -> tuple[list[OAISet], ResumptionToken | None]:
    root = _parse_small(source)
    sets = [
        OAISet(
            spec=clean_text(s.findtext(f"{_O}setSpec")), name=clean_text(s.findtext(f"{_O}setName"))
        )
        for s in root.iter(f"{_O}set")
    ]
    token_elem = root.find(f".//{_O}resumptionToken")
    return sets, _parse_token(token_elem) if token_elem is not None else None
