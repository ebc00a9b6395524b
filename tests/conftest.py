"""Shared fixtures: the labelled pools in ../shared/data, skipped when absent."""
from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_pool(name: str) -> tuple[Path, Path]:
    """Paths of ../shared/data/<name>/pool.jsonl and samples.jsonl, or skip the test."""
    folder = SHARED_DATA / name
    if not (folder / "pool.jsonl").exists():
        pytest.skip(f"{folder} is absent")
    return folder / "pool.jsonl", folder / "samples.jsonl"


@pytest.fixture
def gsm8k() -> tuple[Path, Path]:
    return shared_pool("gsm8k")


@pytest.fixture
def truthfulqa() -> tuple[Path, Path]:
    return shared_pool("truthfulqa")
