"""Path converters for ids in URLs; registered in wovepaper/urls.py."""

from __future__ import annotations


class IdConverter:
    """A database id in a URL: at most 18 digits, so it always fits a 64-bit column."""

    regex = r"[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


class InstitutionKeyConverter:
    """An institution id or a bare ROR id (`042nb2s44`): ROR ids start with a zero, ids never."""

    regex = r"[0-9]{1,18}|0[a-z0-9]{6}[0-9]{2}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value) -> str:
        return str(value)


class PageKeyConverter:
    """A record page's key, `<id>` or `<id>-<slug>` (`/researchers/42-ada-lovelace`), as the id:
    the page redirects any other slug to its canonical URL."""

    regex = r"[0-9]{1,18}(?:-[^/]*)?"

    def to_python(self, value: str) -> int:
        return int(value.partition("-")[0])

    def to_url(self, value: int | str) -> str:
        return str(value)


class WordPageKeyConverter(PageKeyConverter):
    """A page key whose slug is made of word characters only: institution pages also answer to a
    name (`/institutions/3-D Systems`), which a key with any slug would read as id 3."""

    regex = r"[0-9]{1,18}(?:-[\w-]*)?"


class SecretTokenConverter:
    """A secret link's token as secrets.token_urlsafe makes it (a shared list's): URL-safe
    base64 letters, of a sane length."""

    regex = r"[A-Za-z0-9_-]{16,86}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value
