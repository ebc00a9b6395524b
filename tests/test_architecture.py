"""Static checks on core/'s structure: layers that import only downwards, no import cycle, no Streamlit.

The import graph is read from the source with ``ast``, so it counts every
import: at module level, inside functions and under ``TYPE_CHECKING`` alike.
"""

from __future__ import annotations

import ast
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
    {"core.errors", "core.config", "core.logs"},
    {"core.inputs"},
    {"core.stats"},
    {"core.surrogate"},
    {"core.scales", "core.settings"},
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
