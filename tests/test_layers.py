"""Arrows point one way: the shared library imports no app, `institutions` never imports
`researchers` (researchers depend on institutions), and pages take their keys through the
registered path converters rather than re-reading a string argument with their own regex."""

from __future__ import annotations

import ast
from pathlib import Path

from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.converters import PathConverter, StringConverter
from django.urls.resolvers import RoutePattern

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "wovepaper" / "lib"
APPS = {"papers", "researchers", "institutions", "accounts", "chat"}
SITE_ROOT_MODULES = {
    "views",
    "urls",
    "sitemaps",
    "selectors",
    "machine_readers",
    "settings",
    "celery",
}
# Routes whose argument is free text by design, each with its reason; every other argument of
# the project's routes goes through a converter that parses it.
FREE_TEXT_ROUTES = {
    # A ROR id or URL, an OpenAlex id or a name: looked up, then redirected to `<id>-<slug>`.
    "institutions:lookup",
    # A signed token, read by the signer.
    "accounts:digest_unsubscribe",
}


def _imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):  # lazy imports inside functions too
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
                offenders.append(f"{path.relative_to(ROOT)} imports {module}")
    assert list(LIB.rglob("*.py")), "the shared library is missing"
    assert offenders == []


def test_institutions_import_no_researchers_module():
    app = ROOT / "institutions"
    offenders = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in sorted(app.rglob("*.py"))
        for module in _imported_modules(path)
        if module.split(".")[0] == "researchers"
    ]
    assert list(app.rglob("*.py")), "the institutions app is missing"
    assert offenders == []


def _project_routes(patterns, namespace=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            prefix = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _project_routes(entry.url_patterns, prefix)
        elif isinstance(entry, URLPattern):
            module = getattr(entry.callback, "__module__", "") or ""
            if module.split(".")[0] in APPS | {"wovepaper"}:
                yield f"{namespace}{entry.name}", entry


def test_project_routes_take_their_arguments_through_converters():
    routes = list(_project_routes(get_resolver().url_patterns))
    offenders = []
    for name, entry in routes:
        if not isinstance(entry.pattern, RoutePattern) or name in FREE_TEXT_ROUTES:
            continue
        for argument, converter in entry.pattern.converters.items():
            # `str` and `path` hand the view a raw string it would have to parse again.
            if type(converter) in (StringConverter, PathConverter):
                offenders.append(f"{name} ({entry.pattern}): {argument}")
    assert {name for name, _ in routes} >= {"papers:detail", "researchers:detail"}
    assert offenders == []


def test_only_templates_use_template_tags():
    """Views and services share selectors and services; a templatetag module is for templates."""
    offenders = []
    for app in sorted(APPS | {"wovepaper"}):
        for path in sorted((ROOT / app).rglob("*.py")):
            if "templatetags" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or "", *(alias.name for alias in node.names)]
                if any("templatetags" in name.split(".") for name in names):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
