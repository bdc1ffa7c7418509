"""The shared library is the ground floor: it imports no app, so arrows point one way."""

from __future__ import annotations

import ast
from pathlib import Path

LIB = Path(__file__).resolve().parent.parent / "wovepaper" / "lib"
APPS = {"papers", "researchers", "institutions", "accounts"}
SITE_ROOT_MODULES = {"views", "urls", "sitemaps", "selectors", "readers", "settings", "celery"}


def _imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def test_shared_library_imports_no_app_and_not_the_site_root():
    offenders = []
    for path in sorted(LIB.rglob("*.py")):
        for module in _imported_modules(path):
            parts = module.split(".")
            if parts[0] in APPS or (
                parts[0] == "wovepaper" and len(parts) > 1 and parts[1] in SITE_ROOT_MODULES
            ):
                offenders.append(f"{path.relative_to(LIB.parent.parent)} imports {module}")
    assert list(LIB.rglob("*.py")), "the shared library is missing"
    assert offenders == []
