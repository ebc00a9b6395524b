"""ActiveGrade's version, one reading for the CLI's --version, the reports and the OpenAPI document."""

from __future__ import annotations

import functools
import importlib.metadata
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


@functools.cache
def version() -> str:
    """The installed package's version, else the checkout's pyproject.toml's (a checkout run without installing
    it), else 'unreleased'. The reports and the OpenAPI document read a `core.__version__` that never existed and
    said 'unreleased' where `activegrade --version` said 0.2.0 (an integrator's review)."""
    try:
        return importlib.metadata.version("activegrade")
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        return str(tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unreleased"
