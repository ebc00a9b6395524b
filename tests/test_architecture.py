"""Static checks on the structure: core/'s layers import only downwards, with no import cycle and no Streamlit;
above core, app.py, serve.py, ui/ and app_pages/ import only checked services and read-only surfaces, and the
command line and the HTTP API none of the services' unchecked writes.

The import graph is read from the source with ``ast``, so it counts every
import: at module level, inside functions and under ``TYPE_CHECKING`` alike.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "core"


def module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, package: str, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that ``source`` (a module of ``package``) imports, each resolved to the
    longest known module name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            # `from package import module` imports the module; `from module import name` the module
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = sorted(CORE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    graph = {}
    for path in paths:
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = imported_modules(path.read_text(encoding="utf-8"), package, modules) - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the directed graph as a list of nodes, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_graph_sees_imports_inside_functions_and_type_checking():
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import core.b\ndef f():\n    from . import c\n"
    assert imported_modules(source, "core", {"core", "core.b", "core.c"}) == {"core.b", "core.c"}


def test_core_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle in core/: " + " -> ".join(cycle)


LAYERS = [
    {"core.errors", "core.config", "core.logs", "core.version"},
    {"core.inputs"},
    {"core.stats"},
    {"core.surrogate"},
    {"core.scales", "core.rubric", "core.rubric_table", "core.settings"},
    {"core.store"},
    {"core.jobs"},
    {"core.services"},
    {"core.exports"},
    {"core", "core.api", "core.cli", "core.__main__"},
    {"core.testing"},
]
"""core/'s packages from the bottom up (docs/architecture.md): a module imports only from its own layer and the
layers below. Statistics never touch the store; jobs never call the services that start them; only tests,
benchmarks and scripts use core.testing."""


def layer_of(module: str) -> int:
    for index, layer in reversed(list(enumerate(LAYERS))):
        if any(module == name or module.startswith(name + ".") for name in layer - {"core"}):
            return index
    assert module == "core", f"{module} belongs to no layer of LAYERS"
    return next(i for i, layer in enumerate(LAYERS) if "core" in layer)


def test_every_import_goes_down_the_layers():
    upward = [
        f"{module} -> {imported}"
        for module, imports in import_graph().items()
        for imported in imports
        if layer_of(imported) > layer_of(module) and imported != "core"
    ]
    assert not upward, "imports that go up a layer:\n" + "\n".join(sorted(upward))


def test_the_layer_check_sees_an_upward_import():
    assert layer_of("core.stats.estimate") < layer_of("core.store.store") < layer_of("core.services.grading")


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(CORE.parent)))
def test_core_does_not_import_streamlit(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        assert not any(n == "streamlit" or n.startswith("streamlit.") for n in names), f"{path} imports streamlit"


ROOT = CORE.parent
APP_FILES = [
    ROOT / "app.py",
    ROOT / "serve.py",
    *sorted((ROOT / "ui").rglob("*.py")),
    *sorted((ROOT / "app_pages").rglob("*.py")),
]
UNCHECKED_SERVICES = ("core.services.project", "core.services.reservations", "core.services.account_writes")
"""The services' unchecked writes: besides the app's files, the command line and the HTTP API (core/cli,
core/api) never import them either; they act through the checked actions, as auth.OPERATOR or the token's
user."""
ABOVE_CORE_MAY_NOT_IMPORT = ("core.store", "core.jobs", "core.stats", "core.cli", "core.testing", *UNCHECKED_SERVICES)
"""What app.py, serve.py, ui/ and app_pages/ may not import (docs/architecture.md, "Above core"): the store, the
jobs and the statistics directly, and the services' unchecked writes (core.services.project's lifecycle,
core.services.reservations' grade writes, core.services.account_writes). They reach all of those through the
checked actions (core.services.project_actions, grade_actions, team, simulation: each takes the acting user and
checks them) and the read models of core.services (reading, live, setup, overview, progress, tracking,
preparation; database hands out the Store), beside the
read-only surfaces core.errors, core.config, core.logs, core.settings, core.scales, core.inputs, core.surrogate's
backend choice and core.exports."""


def core_modules() -> set[str]:
    return {module_name(p) for p in CORE.rglob("*.py")}


def forbidden_imports(source: str, package: str, forbidden: tuple[str, ...] = ABOVE_CORE_MAY_NOT_IMPORT) -> list[str]:
    """The modules of ``forbidden`` (or inside them) that ``source`` (a module of ``package``) imports."""
    return sorted(
        m
        for m in imported_modules(source, package, core_modules())
        if any(m == f or m.startswith(f + ".") for f in forbidden)
    )


def test_the_check_above_core_sees_a_forbidden_import():
    source = "from core.store import Store\nfrom core.services import project_actions, reservations\nimport core.stats.queue\n"
    assert forbidden_imports(source, "ui") == ["core.services.reservations", "core.stats.queue", "core.store"]
    assert forbidden_imports("from core.services import project_actions, reading\n", "ui") == []


@pytest.mark.parametrize("path", APP_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_app_imports_only_checked_services_and_read_only_surfaces(path):
    found = forbidden_imports(path.read_text(encoding="utf-8"), ".".join(path.relative_to(ROOT).parent.parts))
    assert not found, f"{path.relative_to(ROOT)} imports {', '.join(found)} (see ABOVE_CORE_MAY_NOT_IMPORT)"


ENTRY_POINTS = sorted(p for folder in ("cli", "api") for p in (CORE / folder).rglob("*.py"))


@pytest.mark.parametrize("path", ENTRY_POINTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_cli_and_the_api_reach_no_unchecked_write(path):
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = forbidden_imports(path.read_text(encoding="utf-8"), package, UNCHECKED_SERVICES)
    assert not found, f"{path.relative_to(ROOT)} imports {', '.join(found)} (see UNCHECKED_SERVICES)"


KEYED_SETTINGS = re.compile(r"\bsettings(?:\[|\.get\()")
"""A read of a project's settings by key (``project.settings["method"]``, ``settings.get("proxy")``): the store
hands out core.settings.ProjectSettings, and every reader reads its attributes (``project.settings.method``)."""
SETTINGS_READERS = [p for p in sorted(CORE.rglob("*.py")) if "revisions" not in p.parts] + APP_FILES
"""core/ (but the schema revisions, which rewrite the stored JSON itself), app.py, serve.py, ui/ and app_pages/."""


def test_the_settings_check_sees_a_read_by_key():
    assert KEYED_SETTINGS.search('project.settings["method"]') and KEYED_SETTINGS.search("settings.get('proxy')")
    assert not KEYED_SETTINGS.search("project.settings.method") and not KEYED_SETTINGS.search('stored_settings["x"]')


@pytest.mark.parametrize("path", SETTINGS_READERS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_reader_reads_settings_by_key(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    keyed = [f"{n}: {line.strip()}" for n, line in enumerate(lines, 1) if KEYED_SETTINGS.search(line)]
    assert not keyed, f"{path.relative_to(ROOT)} reads settings by key (use ProjectSettings' attributes): {keyed}"


TYPED_NAMES = {"project.name", "user.name", "account.name", "actor.name"}
"""Names someone typed: a project's, an account's."""


def raw_names(source: str) -> list[str]:
    """The TYPED_NAMES fields of f-strings in ``source``, put into text a page renders as markdown without
    core.inputs.markup.one_line_plain."""
    return [
        ast.unparse(part.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.JoinedStr)
        for part in node.values
        if isinstance(part, ast.FormattedValue) and ast.unparse(part.value) in TYPED_NAMES
    ]


def test_the_raw_name_check_sees_a_name_put_into_markdown():
    assert raw_names('st.info(f"Project **{project.name}** is ready")') == ["project.name"]
    assert raw_names('st.info(f"Project **{one_line_plain(project.name)}** is ready")') == []


@pytest.mark.parametrize("path", APP_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_pages_put_no_typed_name_into_markdown_as_it_is(path):
    """An admin's project name of markdown (an image, a link) rendered on another admin's Simulate page (a
    security review)."""
    found = raw_names(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(ROOT)} renders {found} without one_line_plain"
