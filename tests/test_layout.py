"""The package is installed, so nothing patches sys.path; benchmarks import the product, never tests/."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_MODULES = (
    {"tests"}
    | {p.stem for p in (ROOT / "tests").rglob("*.py")}
    | {p.name for p in (ROOT / "tests").iterdir() if p.is_dir()}
)


def python_files(*folders: str) -> list[Path]:
    return [p for folder in folders for p in sorted((ROOT / folder).rglob("*.py")) if "data" not in p.parts]


def test_nothing_patches_sys_path():
    patched = []
    for path in python_files("tests", "benchmarks", "scripts", "core"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", None) == "sys":
                patched.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert patched == []


def test_benchmarks_import_only_the_product():
    from_tests = []
    for path in python_files("benchmarks"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            from_tests += [f"{path.name}: {n}" for n in names if n.split(".")[0] in TEST_MODULES]
    assert from_tests == []
