#!/usr/bin/env bash
# Install everything the tests need, start PostgreSQL on 127.0.0.1, run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
bash scripts/install-system.sh
"$PYTHON" -m pip install -q -r requirements-dev.txt
"$PYTHON" -m pip install -q --no-deps -r requirements-nodeps.txt
export ACTIVEGRADE_TEST_PG_URL="$(bash scripts/postgres.sh start)"
trap 'bash scripts/postgres.sh stop' EXIT
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
"$PYTHON" -m pytest "$@"
