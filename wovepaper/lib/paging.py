"""Previous/next paging without COUNT(*): fetch one row more than a page to know if more exist.

On tables of millions of rows a count per request costs more than the page itself, so lists show
"previous / next" and the page number; deep pages are capped to keep OFFSET scans bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest

from .bounds import whole_number
from .search import SearchPage

MAX_PAGE = 400


def page_number(request: HttpRequest, *, max_page: int = MAX_PAGE) -> int:
    page = whole_number(request.GET.get("page"), minimum=1)
    return 1 if page is None else min(page, max_page)


def query_choice(request: HttpRequest, name: str, allowed: Container[str], *, default: str) -> str:
    """Query parameter `name` when it is one of `allowed` (a list's sort, say), else `default`."""
    value = request.GET.get(name, default)
    return value if value in allowed else default


def page_url(request: HttpRequest, page: int) -> str:
    params = request.GET.copy()
    params.pop("page", None)
    if page > 1:
        params["page"] = str(page)
    encoded = params.urlencode()
    return f"{request.path}?{encoded}" if encoded else request.path


@dataclass
class Window:
    items: list
    page: int
    has_next: bool
    previous_url: str = ""
    next_url: str = ""
    total_pages: int | None = None
    per_page: int = 0
    last_url: str = ""

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def is_paged(self) -> bool:
        return self.has_previous or self.has_next

    @property
    def start(self) -> int:
        return (self.page - 1) * self.per_page + 1


def window(
    request: HttpRequest,
    fetch: Callable[[int, int], Sequence[Any]],
    *,
    per_page: int,
    max_page: int = MAX_PAGE,
) -> Window:
    """Call `fetch(offset, limit)` for the requested page with limit = per_page + 1."""
    page = page_number(request, max_page=max_page)
    rows = list(fetch((page - 1) * per_page, per_page + 1))
    has_next = len(rows) > per_page and page < max_page
    return Window(
        items=rows[:per_page],
        page=page,
        has_next=has_next,
        previous_url=page_url(request, page - 1) if page > 1 else "",
        next_url=page_url(request, page + 1) if has_next else "",
        per_page=per_page,
    )


def search_window(
    request: HttpRequest, found: SearchPage, *, page: int, per_page: int, max_page: int
) -> Window:
    """The pager of page `page` of search results. The next page exists while matches remain,
    or, when counting stopped short of them, while the engine's order is exact (a date sort
    goes on past the count; a ranked pool ends with it). With an exact total the page count
    is known and the last page is linked, so results can be paged to the end."""
    shown = (page - 1) * per_page + len(found.items)
    beyond_count = found.total_is_capped and not found.approximate and bool(found.items)
    has_next = page < max_page and (shown < found.total or beyond_count)
    exact = found.total and not found.total_is_capped and not found.approximate
    total_pages = min(-(-found.total // per_page), max_page) if exact else None
    return Window(
        items=found.items,
        page=page,
        has_next=has_next,
        previous_url=page_url(request, page - 1) if page > 1 else "",
        next_url=page_url(request, page + 1) if has_next else "",
        total_pages=total_pages,
        per_page=per_page,
        last_url=page_url(request, total_pages) if total_pages and page + 1 < total_pages else "",
    )
