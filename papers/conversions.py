"""TeX converted to MathML once for every web process, not once in each.

A formula's conversion (latex2mathml, then the allowlist: papers.mathtext) takes 0.05-0.1 ms,
and a list page shows up to thirty papers with their formulas. Each process keeps the last
LOCAL_MAX conversions it made or read; those it lacks for a page are read from the shared
cache (Redis in production) in one `get_many` before the page renders (`shared_for`), and
those it made itself are written there after it, in one `set_many`. With several web
processes, the first page to show a formula converts it, and no other process does again;
a process that has every conversion a page needs asks the cache nothing.

A key names the code that converts (`converter_version`: papers/mathtext.py and the
latex2mathml release), so a change to either starts afresh instead of serving old MathML.
The cache may be lost or unreachable at any time: a conversion not found is made here.
Imports no app module (papers.mathtext imports this).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache, wraps
from pathlib import Path

from django.conf import settings
from django.core.cache import cache

from wovepaper.lib.versions import code_digest

log = logging.getLogger(__name__)

# Conversions a process keeps: the lru caches this replaced kept 8,192 of each of three kinds.
LOCAL_MAX = 24_576
# Conversions made here and not yet written to the shared cache: a process that renders
# formulas outside a shared block (a paper's own page) writes them with the next page's.
FRESH_MAX = 2_048
# The shared cache stores "does not convert" (None) as this: an empty string is never MathML.
_NOT_CONVERTED = ""

Key = tuple[str, str, bool]
_local: OrderedDict[Key, str | None] = OrderedDict()
_fresh: dict[Key, str | None] = {}
# Conversions asked of the shared cache and not found there, not asked again: a text's
# formulas outside what a page shows of it (a search's passage, a list's opening words) are
# converted by no one, and every page showing the text would ask for them again.
_asked: dict[Key, None] = {}
_lock = threading.Lock()


@lru_cache(maxsize=1)
def converter_version() -> str:
    """A digest of what converts: this process's papers/mathtext.py and latex2mathml."""
    return code_digest([Path(__file__).resolve().parent / "mathtext.py"], ["latex2mathml"])


def _shared_key(key: Key) -> str:
    kind, tex, display = key
    digest = hashlib.blake2b(f"{kind}\0{int(display)}\0{tex}".encode(), digest_size=16)
    return f"mathml:{converter_version()}:{digest.hexdigest()}"


def kept(kind: str) -> Callable[[Callable[..., str | None]], Callable[..., str | None]]:
    """A conversion `function(tex)` or `function(tex, display)` whose results are kept under
    `kind`: in this process, and for the others through `shared_for`. Its arguments are
    passed by position (display False when left out)."""

    def decorate(function: Callable[..., str | None]) -> Callable[..., str | None]:
        @wraps(function)
        def converted(*args: str | bool) -> str | None:
            key = (kind, str(args[0]), bool(args[1]) if len(args) > 1 else False)
            with _lock:
                if key in _local:
                    _local.move_to_end(key)
                    return _local[key]
            html = function(*args)
            with _lock:
                _local[key] = html
                if len(_local) > LOCAL_MAX:
                    _local.popitem(last=False)
                if len(_fresh) < FRESH_MAX:
                    _fresh[key] = html
            return html

        return converted

    return decorate


@contextmanager
def shared_for(keys: Iterable[Key]) -> Iterator[None]:
    """Around the rendering of a page whose conversions are `keys` (papers.mathtext's
    `conversions_of` gives a text's): those this process lacks are read from the shared cache
    first, and what it converts meanwhile is written there after."""
    seconds = settings.MATHML_CACHE_SECONDS
    if seconds <= 0:
        yield
        return
    with _lock:
        wanted = {
            _shared_key(key): key
            for key in dict.fromkeys(keys)
            if key not in _local and key not in _asked
        }
    if wanted:
        try:
            held = cache.get_many(list(wanted))
        except Exception:  # noqa: BLE001 (any cache backend's error: convert them here)
            log.warning("formulas: cache unreachable, converting them")
            held = {}
        with _lock:
            for shared, key in wanted.items():
                if shared in held:
                    _local[key] = held[shared] if held[shared] != _NOT_CONVERTED else None
                else:
                    _asked[key] = None
            while len(_local) > LOCAL_MAX:
                _local.popitem(last=False)
            while len(_asked) > LOCAL_MAX:
                del _asked[next(iter(_asked))]
    try:
        yield
    finally:
        with _lock:
            fresh = {_shared_key(k): _NOT_CONVERTED if v is None else v for k, v in _fresh.items()}
            _fresh.clear()
        if fresh:
            try:
                cache.set_many(fresh, seconds)
            except Exception:  # noqa: BLE001 (the page is served; its formulas are only not kept)
                log.warning("formulas: cache unreachable, %d conversion(s) not kept", len(fresh))


def forget_local() -> None:
    """This process's own conversions (not the shared cache's): what a new process starts
    with. For tests and benchmarks."""
    with _lock:
        _local.clear()
        _fresh.clear()
        _asked.clear()
