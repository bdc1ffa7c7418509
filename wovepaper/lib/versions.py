"""Which code made a cached thing: a key that names it is new when that code changes, so a
cache needs no invalidation when a release changes what it holds."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from importlib.metadata import version
from pathlib import Path


def code_digest(files: Iterable[Path], packages: Iterable[str] = ()) -> str:
    """A short digest of these source files' bytes and these installed packages' versions."""
    digest = hashlib.blake2b(digest_size=8)
    for path in files:
        digest.update(path.read_bytes())
    for package in packages:
        digest.update(version(package).encode())
    return digest.hexdigest()
