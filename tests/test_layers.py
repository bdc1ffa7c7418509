"""Arrows point one way: the shared library imports no app, `institutions` never imports
`researchers` (researchers depend on institutions), and pages take their keys through the
registered path converters rather than re-reading a string argument with their own regex.

The project's parts and their never-rules are described in docs/layers.toml, which the tests
below read and check, every one: imports (lazy ones too), models named by string, the tasks
modules no one imports, the task names the settings route and schedule, and an import graph
without a circle."""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.converters import PathConverter, StringConverter
from django.urls.resolvers import RoutePattern

ROOT = Path(__file__).resolve().parent.parent
LAYERS = tomllib.loads((ROOT / "docs" / "layers.toml").read_text())
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
        if name in FREE_TEXT_ROUTES:
            continue
        if not isinstance(entry.pattern, RoutePattern):
            # A regex route hands its groups to the view as strings, parsed by no converter.
            groups = re.compile(str(entry.pattern.regex.pattern)).groupindex
            offenders.extend(f"{name} ({entry.pattern}): {group}" for group in groups)
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
                # The project's own tag modules (Django's humanize filters serve papers.jinja).
                if any(
                    "templatetags" in name.split(".") and not name.startswith("django.")
                    for name in names
                ):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


# ---------------------------------------------------------------------------------------------
# docs/layers.toml


def _project_modules() -> dict[str, Path]:
    """Every module of the parts (migrations aside: they are history, written by Django)."""
    modules = {}
    for package in set(LAYERS["parts"].values()):
        top = package.split(".")[0]
        for path in sorted((ROOT / top).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


MODULES = _project_modules()


def _part_of(module: str) -> str | None:
    best = None
    for name, package in LAYERS["parts"].items():
        if module == package or module.startswith(package + "."):
            if best is None or len(package) > len(LAYERS["parts"][best]):
                best = name
    return best


def _imports(module: str) -> Iterator[tuple[int, str]]:
    """(line, module imported) for every import of `module`, relative ones resolved, inside
    functions too; `from package import name` counts as the submodule when it is one."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                name = f"{base}.{alias.name}"
                yield node.lineno, name if name in MODULES else base


def _project_module(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def test_the_layers_file_names_every_part_and_each_rule_names_known_parts():
    parts = set(LAYERS["parts"])
    assert {"lib", "site", "papers", "researchers", "institutions", "accounts", "chat"} <= parts
    for rule in LAYERS["never"]:
        assert rule["part"] in parts and set(rule["imports"]) <= parts and rule["because"]
    assert all(_part_of(module) for module in MODULES)


def test_no_part_imports_what_its_never_rules_forbid():
    never = {rule["part"]: set(rule["imports"]) for rule in LAYERS["never"]}
    offenders = []
    for module in MODULES:
        forbidden = never.get(_part_of(module) or "", set())
        for line, imported in _imports(module):
            target = _project_module(imported)
            if target and _part_of(target) in forbidden:
                offenders.append(f"{module}:{line} imports {imported}")
    assert offenders == []


def test_parts_import_only_parts_below_them():
    """Between parts, as between modules, no circle: every import points down the order the
    layers file gives, the site package on top and the shared library at the bottom."""
    order = LAYERS["order"]["parts"]
    assert sorted(order) == sorted(LAYERS["parts"])
    offenders = []
    for module in MODULES:
        part = _part_of(module) or ""
        for line, imported in _imports(module):
            target = _project_module(imported)
            other = _part_of(target) if target else None
            if other and other != part and order.index(other) < order.index(part):
                offenders.append(f"{module}:{line} ({part}) imports {imported} ({other})")
    assert offenders == []


def test_no_module_imports_a_tasks_module_unless_allowed():
    """Work is queued by task name (wovepaper.lib.queueing), never by importing the task."""
    rules = LAYERS["tasks"]
    allowed = {entry["module"] for entry in rules["importers_allowed"]}
    offenders = []
    for module in MODULES:
        if module.rpartition(".")[2] == rules["module"] or module in allowed:
            continue
        for line, imported in _imports(module):
            target = _project_module(imported) or ""
            if target.rpartition(".")[2] == rules["module"]:
                offenders.append(f"{module}:{line} imports {imported}")
    assert offenders == []
    # Each exception is still needed: an entry that no longer applies goes.
    assert all(
        any(
            _project_module(i).rpartition(".")[2] == rules["module"]
            for _, i in _imports(m)
            if _project_module(i)
        )
        for m in allowed
    )


MODEL_STRING = re.compile(r"^([a-z_]+)\.([A-Z][A-Za-z0-9]*)$")


def _models_by_string(module: str) -> Iterator[tuple[int, str]]:
    apps = {name for name in LAYERS["parts"].values() if "." not in name} - {"wovepaper"}
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = MODEL_STRING.match(node.value)
            if match and match.group(1) in apps:
                yield node.lineno, node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "get_model"
            and len(node.args) >= 2
            and all(isinstance(a, ast.Constant) for a in node.args[:2])
        ):
            yield node.lineno, f"{node.args[0].value}.{node.args[1].value}"  # type: ignore[attr-defined]


def test_models_of_another_app_are_named_by_string_only_where_allowed():
    allowed = {(e["module"], e["model"]) for e in LAYERS["models_by_string"]["allowed"]}
    found = set()
    offenders = []
    for module in MODULES:
        own = module.split(".")[0]
        for line, model in _models_by_string(module):
            if model.split(".")[0] == own:
                continue
            found.add((module, model))
            if (module, model) not in allowed:
                offenders.append(f"{module}:{line} names {model}")
    assert offenders == []
    assert allowed - found == set(), "allow-list entries that no longer apply"


def test_the_import_graph_has_no_circle():
    """Over every project module, lazy imports included: a circle is two modules that each
    need the other, whichever of them Python happens to load first."""
    graph = {
        module: {t for _, i in _imports(module) if (t := _project_module(i)) and t != module}
        for module in MODULES
    }
    circles = []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert len(graph) > 100 and circles == []


def test_task_names_in_settings_and_senders_are_registered_tasks():
    from wovepaper.celery import app

    app.loader.import_default_modules()
    registered = set(app.tasks)
    named = {f"route {name}": name for name in settings.CELERY_TASK_ROUTES}
    named |= {f"beat {key}": entry["task"] for key, entry in settings.CELERY_BEAT_SCHEDULE.items()}
    senders = set(LAYERS["tasks"]["senders"])
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) in senders
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                named[f"{module}:{node.lineno}"] = node.args[0].value
    assert len(named) > 20
    assert {where: name for where, name in named.items() if name not in registered} == {}


def test_only_clients_talk_to_the_network():
    """An HTTP, model or mail library is imported only by the clients: a `clients` package, the
    sources' package, or a module the layers file names with its reason."""
    rules = LAYERS["network"]
    libraries = set(rules["libraries"])
    allowed = {entry["module"] for entry in rules["allowed"]}
    offenders, users = [], set()
    for module in MODULES:
        for line, imported in _imports(module):
            if not any(imported == lib or imported.startswith(lib + ".") for lib in libraries):
                continue
            users.add(module)
            in_clients = "clients" in module.split(".") or module.split(".")[0] in set(
                rules["allowed_packages"]
            )
            if not in_clients and module not in allowed:
                offenders.append(f"{module}:{line} imports {imported}")
    assert offenders == []
    assert allowed <= users, "allow-list entries that no longer apply"


WRITES = {"save", "update", "bulk_update", "bulk_create", "create", "get_or_create"}
WRITES |= {"update_or_create", "delete"}


def test_models_are_written_only_by_their_own_app():
    """`Authorship.objects.filter(...).update(...)` and the like, outside the model's app, in
    code that names the model (an instance's .save() from a query is not seen: matching hands
    its objects to papers.services, which writes them)."""
    offenders = []
    for entry in LAYERS["written_only_by_their_app"]["models"]:
        app, model = entry["model"].split(".")
        for module, path in MODULES.items():
            if module.split(".")[0] == app:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                    continue
                root = node.func.value
                while isinstance(root, ast.Attribute | ast.Call):
                    root = root.func if isinstance(root, ast.Call) else root.value
                if node.func.attr in WRITES and isinstance(root, ast.Name) and root.id == model:
                    offenders.append(f"{module}:{node.lineno} {model} .{node.func.attr}()")
    assert offenders == []
