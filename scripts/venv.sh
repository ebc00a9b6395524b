#!/usr/bin/env bash
# Sourced by demo.sh and test.sh: make sure the project's virtual environment
# (.venv) exists and holds the requirement set named in $1 ("app" or "test"),
# then put it first on the PATH.
#
# - The interpreter is $PYTHON when set, else the first python3 on the PATH.
#   If $PYTHON already runs inside a virtual environment (yours), it is used as
#   it is and no .venv is made.
# - Python 3.11 to 3.13 only: the versions of current Debian and Ubuntu
#   releases for which every pinned package has wheels.
# - Where `python -m venv` fails (Debian without python3-venv, or a venv module
#   without ensurepip), python3-venv is installed with apt-get, then retried.
# - A second run reinstalls nothing unless requirements*.txt or pyproject.toml
#   changed (a SHA-256 of them is kept in .venv).
set -euo pipefail
want="${1:?usage: source scripts/venv.sh app|test}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${PYTHON:-python3}"
command -v "$base" >/dev/null 2>&1 || { echo "error: no '$base' on the PATH; install Python 3.11-3.13 or set PYTHON=/path/to/python3" >&2; exit 1; }

version="$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
case "$version" in
  3.11|3.12|3.13) ;;
  *) echo "error: $base is Python $version; ActiveGrade needs Python 3.11, 3.12 or 3.13 (set PYTHON=/path/to/python3.11, for example)" >&2; exit 1 ;;
esac

if "$base" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)'; then
  venv="$("$base" -c 'import sys; print(sys.prefix)')"   # the caller's own environment
else
  venv="$root/.venv"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
    rm -rf "$venv"
    echo "==> creating a virtual environment in .venv (Python $version)"
    if ! "$base" -m venv "$venv" >/dev/null 2>&1; then
      rm -rf "$venv"
      echo "==> '$base -m venv' failed: installing Debian's python3-venv with apt-get"
      sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "python3-venv" "python$version-venv" ||
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv
      "$base" -m venv "$venv"
    fi
  fi
fi

stamp="$venv/.activegrade-$want.sha256"
KEYED_FILES="requirements.txt requirements-dev.txt requirements-nodeps.txt pyproject.toml"
digest="$(cd "$root" && cat $KEYED_FILES | sha256sum | cut -d' ' -f1)"
current() { [ "$(cat "$venv/.activegrade-$1.sha256" 2>/dev/null)" = "$digest" ]; }
if ! current "$want" && ! { [ "$want" = app ] && current test; }; then  # the test set holds the app's
  py="$venv/bin/python"
  echo "==> installing the $want dependencies into $venv (first run: several minutes; progress below)"
  # pip: quiet (no line per package), its progress bars on, and without the warning a pip configuration
  # prints for every package a file:// index in it lacks; errors and other warnings still show
  pip_install() {
    "$py" -m pip install --disable-pip-version-check -q --progress-bar on "$@" \
      2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  }
  echo "==> pip, setuptools, wheel"
  pip_install -U pip setuptools wheel
  # torch: PyPI's Linux wheel is the multi-GB CUDA build. Without an NVIDIA GPU take the CPU build of the
  # pinned version: a wheel at hand first (pip's find-links, e.g. a wheelhouse in pip.conf or PIP_FIND_LINKS,
  # no index asked), else PyTorch's CPU index, asked once (no retries against an index that cannot be
  # reached); requirements.txt then finds it installed.
  torch_pin="$(grep -E '^torch==' "$root/requirements.txt" | cut -d' ' -f1)"
  if ! command -v nvidia-smi >/dev/null 2>&1 && ! "$py" -c 'import torch' >/dev/null 2>&1; then
    torch_index="${ACTIVEGRADE_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"
    if pip_install --no-deps --no-index "$torch_pin" 2>/dev/null; then
      echo "==> no NVIDIA GPU: $torch_pin installed from a wheel at hand (pip's find-links)"
    else
      echo "==> no NVIDIA GPU: installing the CPU build of $torch_pin from $torch_index"
      pip_install --no-deps --retries 0 --index-url "$torch_index" "$torch_pin" || {
        echo "error: $torch_index did not answer; set ACTIVEGRADE_TORCH_INDEX to a mirror, or install $torch_pin into $venv first" >&2
        exit 1
      }
    fi
  fi
  echo "==> the packages of requirements$([ "$want" = test ] && echo "-dev").txt"
  if [ "$want" = test ]; then
    pip_install -r "$root/requirements-dev.txt"
    "$py" -m pip install --disable-pip-version-check --no-deps --no-build-isolation -r "$root/requirements-nodeps.txt"
  else
    pip_install -r "$root/requirements.txt"
  fi
  echo "==> ActiveGrade itself (editable)"
  "$py" -m pip install --disable-pip-version-check --no-deps --no-build-isolation -e "$root" >/dev/null
  echo "$digest" > "$stamp"
fi
export PATH="$venv/bin:$PATH" VIRTUAL_ENV="$venv"
export PYTHON="$venv/bin/python"
