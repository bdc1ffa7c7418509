"""The arXiv id in API paths; registered in papers/api/urls.py, its pattern in the schema."""

from __future__ import annotations


class ArxivIdConverter:
    """New-style `2401.01234` or old-style `astro-ph/9901001` (with its slash), an optional
    version suffix dropped: the API answers with the latest version either way."""

    regex = r"(?:[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7}|\d{4}\.\d{4,5})(?:v\d{1,4})?"

    def to_python(self, value: str) -> str:
        head, sep, tail = value.rpartition("v")
        return head if sep and tail.isdigit() and head[-1:].isdigit() else value

    def to_url(self, value: str) -> str:
        return value
