"""Path converters for arXiv ids in URLs, registered in wovepaper/urls.py: the API's `arxiv_id`
and the paper page's key."""

from __future__ import annotations

import re

from wovepaper.lib.identifiers import ARXIV_ID, ARXIV_NEW_STYLE, ARXIV_OLD_STYLE, CATEGORY_CODE

# A paper page's key, `<id>[vN][-slug]`: 2401.01234v2-title, math.GT/0309136-title. The 404 page
# reads it too, to point at arXiv for a paper not harvested yet.
PAPER_KEY = re.compile(
    rf"^(?:arxiv:)?(?P<id>{ARXIV_ID})(?:v(?P<version>\d+))?(?:-(?P<slug>.*))?$",
    re.IGNORECASE,
)


class ArxivIdConverter:
    """New-style `2401.01234` or old-style `astro-ph/9901001` (with its slash), an optional
    version suffix dropped: the API answers with the latest version either way."""

    regex = rf"(?:{ARXIV_OLD_STYLE}|{ARXIV_NEW_STYLE})(?:v\d{{1,4}})?"

    def to_python(self, value: str) -> str:
        head, sep, tail = value.rpartition("v")
        return head if sep and tail.isdigit() and head[-1:].isdigit() else value

    def to_url(self, value: str) -> str:
        return value


def normalize_old_style(arxiv_id: str) -> str:
    """Old-style archives are lower case and their subject classes upper case (math.GT/0309136)."""
    if "/" not in arxiv_id:
        return arxiv_id
    archive, number = arxiv_id.split("/", 1)
    head, _, subject = archive.partition(".")
    return f"{head.lower()}.{subject.upper()}/{number}" if subject else f"{head.lower()}/{number}"


class PaperKeyConverter:
    """A paper page's key (PAPER_KEY, any case, trailing slashes allowed) as the paper's arXiv id:
    the page redirects every other spelling to its canonical URL."""

    regex = rf"(?i:(?:arxiv:)?(?:{ARXIV_ID})(?:v\d+)?(?:-.*)?)/*"

    def to_python(self, value: str) -> str:
        match = PAPER_KEY.match(value.rstrip("/"))
        if match is None:  # the regex above admits only keys PAPER_KEY reads
            raise ValueError(value)
        return normalize_old_style(match["id"])

    def to_url(self, value: str) -> str:
        return value


class _Verbatim:
    """A converter whose regex admits only good values, handed to the view as they are."""

    regex: str

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class CategoryConverter(_Verbatim):
    """An arXiv category code in a URL (cs.LG, hep-th, math.GT, any case): the category page
    and its feeds, which answer for the code's own spelling."""

    regex = f"(?i:{CATEGORY_CODE})"


class DataFileConverter(_Verbatim):
    """The name of an open bulk file under /data/: the identity links and their sidecar."""

    regex = r"identity-links\.(?:jsonl\.gz|json)"


class CitationExtensionConverter(_Verbatim):
    """The file extension of a citation export: `cite.bib`, `cite.ris`, `cite.json`."""

    regex = "bib|ris|json"
