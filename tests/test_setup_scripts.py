"""scripts/venv.sh, which `make demo` and `make test` source, refuses an unsupported Python clearly
and reuses an environment whose requirements did not change."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KEYED_FILES = ("requirements.txt", "requirements-dev.txt", "requirements-nodeps.txt", "pyproject.toml")


def source_venv(python: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", f'source "{ROOT}/scripts/venv.sh" app && echo "PYTHON=$PYTHON"'],
        env={"PATH": "/usr/bin:/bin", "PYTHON": python, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_unsupported_python_is_refused_with_the_versions_that_work(tmp_path):
    fake = tmp_path / "python3"
    fake.write_text('#!/bin/sh\necho "3.10"\n')
    fake.chmod(0o755)
    result = source_venv(str(fake), tmp_path)
    assert result.returncode == 1
    assert "Python 3.10" in result.stderr and "3.11, 3.12 or 3.13" in result.stderr


def test_a_missing_interpreter_is_named(tmp_path):
    result = source_venv(str(tmp_path / "no-such-python"), tmp_path)
    assert result.returncode == 1 and "no-such-python" in result.stderr


def test_an_environment_of_ones_own_is_used_as_it_is(tmp_path):
    """The interpreter running these tests lives in a virtual environment whose stamp is current
    (make test made it): sourcing again installs nothing and selects that interpreter."""
    assert sys.prefix != sys.base_prefix, "the tests run inside a virtual environment"
    keyed = b"".join((ROOT / name).read_bytes() for name in KEYED_FILES)
    stamp = Path(sys.prefix) / ".activegrade-test.sha256"
    if not stamp.exists() or stamp.read_text().strip() != hashlib.sha256(keyed).hexdigest():
        pytest.skip("the environment is older than the requirements: make test brings it up to date first")
    result = source_venv(sys.executable, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "installing" not in result.stdout
    assert f"PYTHON={sys.prefix}/bin/python" in result.stdout


# An interpreter that stands in for a virtual environment's python: it answers venv.sh's checks, has no torch,
# logs every pip command to $FAKE_LOG (one line each) and fails the ones whose arguments hold $FAKE_FAIL.
FAKE_PYTHON = """#!/bin/bash
case "$*" in
  *sys.version_info*) echo 3.11 ;;
  *sys.base_prefix*) exit 0 ;;
  *"print(sys.prefix)"*) echo "$FAKE_PREFIX" ;;
  *"import torch"*) exit 1 ;;
  "-m pip --version") echo "pip 26" ;;
  "-m pip "*) echo "$*" >> "$FAKE_LOG"; [ -n "$FAKE_FAIL" ] && [[ "$*" == *"$FAKE_FAIL"* ]] && exit 1; exit 0 ;;
esac
"""


@pytest.mark.parametrize("wheel_at_hand", [True, False])
def test_a_first_install_is_quiet_and_asks_the_torch_index_once_only_without_a_wheel_at_hand(tmp_path, wheel_at_hand):
    fake = tmp_path / "bin" / "python"  # where venv.sh finds the environment's interpreter
    fake.parent.mkdir()
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    log = tmp_path / "pip.log"
    result = subprocess.run(
        ["bash", "-c", f'source "{ROOT}/scripts/venv.sh" app'],
        env={
            "PATH": "/usr/bin:/bin",  # no nvidia-smi there
            "PYTHON": str(fake),
            "HOME": str(tmp_path),
            "FAKE_PREFIX": str(tmp_path),
            "FAKE_LOG": str(log),
            "FAKE_FAIL": "" if wheel_at_hand else "--no-index",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert all(line.startswith("==> ") for line in result.stdout.splitlines()), result.stdout  # a line per stage
    installs = [line for line in log.read_text().splitlines() if " install " in line and " -e " not in line]
    assert all(" -q " in line and "--progress-bar on" in line for line in installs), installs  # pip's bars only
    torch = [line for line in installs if "torch==" in line]
    assert "--no-index" in torch[0]  # a wheel at hand first, no index asked
    if wheel_at_hand:
        assert len(torch) == 1 and "from a wheel at hand" in result.stdout
    else:
        assert len(torch) == 2 and "--retries 0" in torch[1] and "download.pytorch.org/whl/cpu" in torch[1]
