"""Related beside a search's matches: on a first page of papers that hold the words, the papers
related by meaning that do not (found by the hybrid backend, wovepaper.lib.search.hybrid), and
how many of them the page keeps."""

from __future__ import annotations

# Below a page of papers that hold the words, the papers related by meaning are a short
# complement; where the words find fewer, the related ones fill the page.
RELATED_BESIDE_MATCHES = 5


def related_shown(matches: int, per_page: int) -> int:
    """How many papers related by meaning a first page of `per_page` shows below `matches`
    papers that hold the words."""
    return max(RELATED_BESIDE_MATCHES, per_page - matches)
