"""A mapped file's pages mapped into the process at once (wovepaper.lib.mapped): what a web
worker does for its search indexes before it accepts requests."""

from __future__ import annotations

import mmap
import platform
import sys
from pathlib import Path

import pytest

from wovepaper.lib.mapped import mapped_ranges, populate, populate_soon, wait_populated

SIZE = 64 * mmap.PAGESIZE


def resident_bytes(start: int) -> int:
    """The bytes of the mapping at `start` this process has mapped in (smaps' Rss)."""
    lines = Path("/proc/self/smaps").read_text().splitlines()
    for at, line in enumerate(lines):
        if line.split("-", 1)[0] == f"{start:x}":
            rss = next(entry for entry in lines[at + 1 :] if entry.startswith("Rss:"))
            return int(rss.split()[1]) * 1024
    raise AssertionError("no such mapping")


@pytest.fixture
def mapped_file(tmp_path):
    path = tmp_path / "index" / "segment.bin"
    path.parent.mkdir()
    path.write_bytes(b"\x01" * SIZE)
    with path.open("rb") as file, mmap.mmap(file.fileno(), SIZE, access=mmap.ACCESS_READ) as view:
        yield path, view


@pytest.mark.skipif(sys.platform != "linux", reason="/proc/self/maps is Linux's")
def test_the_mapping_of_a_file_or_of_the_files_under_a_directory_is_found(mapped_file):
    path, _ = mapped_file
    ranges = mapped_ranges(path)
    assert len(ranges) == 1 and ranges[0][1] - ranges[0][0] == SIZE
    assert mapped_ranges(path.parent) == ranges
    assert mapped_ranges(path.parent.parent / "elsewhere") == []


@pytest.mark.skipif(sys.platform != "linux", reason="madvise(MADV_POPULATE_READ) is Linux's")
def test_populating_maps_every_page_in_without_reading_them(mapped_file):
    path, _ = mapped_file
    ((start, _end),) = mapped_ranges(path)
    assert resident_bytes(start) < SIZE  # nothing read yet: no page mapped in
    kernel = tuple(int(part) for part in platform.release().split(".")[:2])
    if kernel < (5, 14):
        assert populate(path) == 0  # left to be mapped when read, as before
    else:
        assert populate(path) == SIZE
        assert resident_bytes(start) == SIZE


def test_a_path_nothing_maps_is_left_alone(tmp_path):
    assert populate(tmp_path / "nothing") == 0


@pytest.mark.skipif(sys.platform != "linux", reason="madvise(MADV_POPULATE_READ) is Linux's")
def test_an_index_opened_while_serving_is_mapped_in_beside_it_and_warm_up_can_wait(mapped_file):
    path, _ = mapped_file
    ((start, _end),) = mapped_ranges(path)
    assert resident_bytes(start) < SIZE
    thread = populate_soon(path)
    assert thread.daemon  # a worker that exits does not wait for it
    wait_populated()
    assert not thread.is_alive()
    kernel = tuple(int(part) for part in platform.release().split(".")[:2])
    if kernel < (5, 14):
        assert resident_bytes(start) < SIZE  # left to be mapped when read, as before
    else:
        assert resident_bytes(start) == SIZE
