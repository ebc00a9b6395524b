#!/usr/bin/env bash
# Install everything the tests need into .venv (and Chromium, PostgreSQL with apt-get),
# start PostgreSQL on 127.0.0.1, run the linters and the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-system.sh
source scripts/venv.sh test
export ACTIVEGRADE_TEST_PG_URL="$(bash scripts/postgres.sh start)"
trap 'bash scripts/postgres.sh stop' EXIT
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
ruff check .  # each on its own line: a failing command before && does not stop a set -e script
ruff format --check .
python -m pytest "$@"
