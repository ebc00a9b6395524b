"""The test suite's time per marker, from one run's JUnit XML report.

    python -m pytest --junitxml=artifacts/junit.xml ...
    python benchmarks/ci_markers.py artifacts/junit.xml

Each test's time is its setup, call and teardown (pytest's junit_duration_report
"total"). The tests of each marker are those `pytest --collect-only -m MARKER`
selects, so a test counts under every marker it has; "none of these" are the
rest. Prints a markdown table.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKERS = ("slow", "e2e", "postgres")


def times(report: Path) -> dict[str, float]:
    """Seconds per test id (``tests.app.test_x::test_y[param]``, as JUnit names it)."""
    cases = ET.parse(report).getroot().iter("testcase")
    return {f"{case.get('classname')}::{case.get('name')}": float(case.get("time", 0)) for case in cases}


def selected(marker: str) -> set[str]:
    """The tests ``-m marker`` selects, named as in the JUnit report."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider", "-m", marker],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    ids = set()
    for line in out.splitlines():
        if "::" in line:  # tests/x/test_y.py::Class::test_z[p] -> tests.x.test_y.Class::test_z[p]
            path, *classes, name = line.split("::")
            ids.add(f"{'.'.join([path.removesuffix('.py').replace('/', '.'), *classes])}::{name}")
    return ids


def main(report: Path) -> None:
    measured = times(report)
    groups = {marker: selected(marker) & set(measured) for marker in MARKERS}
    marked = set().union(*groups.values())
    groups["none of these"] = set(measured) - marked
    total = sum(measured.values())
    print("| marker | tests | seconds | share |")
    print("|---|---|---|---|")
    for name, ids in groups.items():
        seconds = sum(measured[i] for i in ids)
        print(f"| {name} | {len(ids)} | {seconds:.0f} | {seconds / total:.0%} |")
    print(f"| all | {len(measured)} | {total:.0f} | 100% |")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
