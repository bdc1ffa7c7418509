"""A memory-mapped file's pages mapped into this process at once, not on first touch.

An index another library maps (usearch's HNSW file) is shared by every process through the
page cache, but each process still takes a page fault the first time it reads each of its
pages: at 1M papers a web worker's first searches by meaning took about 570 faults each,
2.6 ms more than the same search later. `populate` asks the kernel to map them all in one call
(madvise MADV_POPULATE_READ, Linux 5.14): 77 ms for a 917 MB index already in the page
cache, read from disk first if it is not. Elsewhere (another system, an older kernel) it does
nothing and the pages are mapped as they are read, as before. Imports no app.

An index opened while requests are being served (the first search after a merge) is mapped
in by `populate_soon`, in a thread of its own, so that no search waits for it; a worker's
warm-up waits for those threads (`wait_populated`) before the worker accepts requests.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import threading
from functools import lru_cache
from pathlib import Path

log = logging.getLogger(__name__)

MADV_POPULATE_READ = 22  # linux/mman.h

_populating: list[threading.Thread] = []
_populating_lock = threading.Lock()


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name, use_errno=True) if name else None


def mapped_ranges(path: Path, maps: Path = Path("/proc/self/maps")) -> list[tuple[int, int]]:
    """The address ranges this process has `path` mapped at, or any file under it when it is a
    directory (none where /proc is not)."""
    wanted = str(path.resolve())
    under = wanted.rstrip("/") + "/"
    ranges = []
    try:
        lines = maps.read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and (fields[5] == wanted or fields[5].startswith(under)):
            start, end = (int(part, 16) for part in fields[0].split("-"))
            ranges.append((start, end))
    return ranges


def populate(path: Path) -> int:
    """Map every page of this process's mappings of `path` (a file, or the files under a
    directory) now; the bytes it mapped (0 where the system cannot, which only leaves them to
    be mapped when read)."""
    libc = _libc()
    if libc is None:
        return 0
    done = 0
    for start, end in mapped_ranges(path):
        # ctypes releases the GIL for the call: other threads go on meanwhile.
        if libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), MADV_POPULATE_READ):
            log.info("%s: pages left to be mapped when read (errno %d)", path, ctypes.get_errno())
            return done
        done += end - start
    return done


def populate_soon(path: Path) -> threading.Thread:
    """`populate(path)` in a thread of its own, started now. The mapping may be dropped
    meanwhile (a newer index replaced it): madvise then fails on it and nothing is lost."""
    thread = threading.Thread(target=populate, args=(path,), name="populate", daemon=True)
    with _populating_lock:
        _populating[:] = [t for t in _populating if t.is_alive()]
        _populating.append(thread)
    thread.start()
    return thread


def wait_populated(timeout: float | None = None) -> None:
    """Until every `populate_soon` started so far has finished (`timeout` seconds each)."""
    with _populating_lock:
        started = list(_populating)
    for thread in started:
        thread.join(timeout)
