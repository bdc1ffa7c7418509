"""Every module, package and file the docs name exists: a move that forgets its docs fails here.

Read from README.md and docs/*.md: paths of the repository (`papers/citations/load.py`,
`deploy/healthcheck.sh`, `templates/...`) and dotted module names of the project's packages
(`papers.citations.load`, `wovepaper.lib.leases.LeaseKept`: a module, or a name one defines)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TOPS = ("wovepaper", "sources", "papers", "researchers", "institutions", "accounts", "chat")
FOLDERS = (*TOPS, "templates", "static", "tests", "benchmarks", "deploy", "docs", "tools")
_PATH = re.compile(rf"(?<![\w./-])((?:{'|'.join(FOLDERS)})/[\w./-]*\w)")
_DOTTED = re.compile(rf"(?<![\w./-])((?:{'|'.join(TOPS)})(?:\.[A-Za-z_]\w*)+)")
# Written as patterns or placeholders, not as one file; or what a benchmark writes when run.
_PLACEHOLDER = re.compile(r"[<>*{}…]|\.\.\.|/X$|/N$|^benchmarks/out\b")


def _names_defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _dotted_exists(name: str) -> bool:
    parts = name.split(".")
    # The longest module prefix, then at most two names inside it (a class and its member).
    for cut in range(len(parts), 0, -1):
        module = _module_file(parts[:cut])
        if module is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        if rest[0] in _names_defined(module):
            return True
        # A template-tag name, a settings key, a task name ("papers.fetch_citations"): these
        # are checked by their own tests, so a name that is no module member is let through
        # only where a module of that name does not exist either.
        return cut == 1
    return False


def _paths_named() -> dict[str, set[str]]:
    named: dict[str, set[str]] = {}
    for doc in DOCS:
        for code in re.findall(r"`([^`\n]+)`|\]\(([^)\s]+)\)", doc.read_text()):
            text = code[0] or code[1]
            for found in _PATH.findall(text) + _DOTTED.findall(text):
                if not _PLACEHOLDER.search(found):
                    named.setdefault(found.rstrip("."), set()).add(doc.name)
    return named


def test_every_path_and_module_the_docs_name_exists():
    named = _paths_named()
    missing = []
    for name, docs in sorted(named.items()):
        exists = (ROOT / name).exists() if "/" in name else _dotted_exists(name)
        if not exists:
            missing.append(f"{name} (in {', '.join(sorted(docs))})")
    assert len(named) > 100, "the docs name the code: the reader above found too little"
    assert missing == []
