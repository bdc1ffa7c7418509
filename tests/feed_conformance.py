"""What every feed must be, checked with feedparser and the feed formats' own rules.

Atom (RFC 4287): the feed and each entry have an `id` that is an IRI and an `updated` date.
RSS 2.0: each item has a `guid` and a `pubDate`. feedparser reads both without complaint
(`bozo == 0`), and every date parses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import feedparser

ATOM = "{http://www.w3.org/2005/Atom}"
# RFC 3987: an IRI starts with a scheme and a colon, and holds no space or delimiter that
# must be escaped.
_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>\"{}|\\^`]+")


def conforming_feed(content: bytes) -> feedparser.FeedParserDict:
    """The feed parsed, once it is shown to conform; an AssertionError says what does not."""
    feed = feedparser.parse(content)
    assert feed.bozo == 0, feed.get("bozo_exception")
    root = ET.fromstring(content)
    if root.tag == f"{ATOM}feed":
        assert feed.version == "atom10"
        for node in (root, *root.findall(f"{ATOM}entry")):
            identifier = node.findtext(f"{ATOM}id") or ""
            assert _IRI.fullmatch(identifier), f"Atom id is not an IRI: {identifier!r}"
            assert node.findtext(f"{ATOM}updated"), f"no updated in {identifier}"
        for entry in feed.entries:
            assert entry.updated_parsed, entry.id
    else:
        assert root.tag == "rss" and feed.version == "rss20", root.tag
        for item in root.findall("channel/item"):
            assert item.findtext("guid"), f"an item without guid: {item.findtext('link')}"
            assert item.findtext("pubDate"), f"an item without pubDate: {item.findtext('guid')}"
        for entry in feed.entries:
            assert entry.published_parsed, entry.id
    return feed
