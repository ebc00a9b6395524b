#!/usr/bin/env bash
# The whole test suite N times in a row on a busy machine: four CPU-bound processes
# (`python -c "while True: pass"`) compete for the CPUs during every run, as on the shared
# 2-core CI machine of issue 9 (load average 6 to 11). Setup (system packages, .venv,
# PostgreSQL) happens first, before the competing processes start, and is not timed.
#
#   bash benchmarks/ci_busy.sh [N=3] [pytest arguments...]
#
# With $PYTHON set to an interpreter that already has the test requirements (a virtual
# environment of yours), that one is used as it is and nothing is installed; with
# $ACTIVEGRADE_TEST_PG_URL set, that PostgreSQL server is used. Otherwise the setup is
# `make test`'s: scripts/install-system.sh, scripts/venv.sh test, scripts/postgres.sh start.
#
# Prints one markdown table row per run (result line, pytest's own seconds, wall seconds,
# load average at start, lowest and highest during the run, at the end) and appends them to
# artifacts/ci-busy.md; each run's full output is artifacts/ci-busy-<k>.log.
# The competing processes and the load sampler are stopped on exit, whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
shift || true

if [ -z "${PYTHON:-}" ]; then
  bash scripts/install-system.sh
  source scripts/venv.sh test
fi
if [ -z "${ACTIVEGRADE_TEST_PG_URL:-}" ]; then
  ACTIVEGRADE_TEST_PG_URL="$(bash scripts/postgres.sh start)"
  export ACTIVEGRADE_TEST_PG_URL
  started_pg=1
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
mkdir -p artifacts
out=artifacts/ci-busy.md
loads="$(mktemp)"
pids=()

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f "$loads"
  [ -z "${started_pg:-}" ] || bash scripts/postgres.sh stop
}
trap cleanup EXIT

for _ in 1 2 3 4; do
  "$PYTHON" -c "while True: pass" &
  pids+=("$!")
done
(while true; do cut -d' ' -f1 /proc/loadavg >>"$loads"; sleep 5; done) &
pids+=("$!")

load1() { cut -d' ' -f1 /proc/loadavg; }
header="| run | result | pytest s | wall s | load at start | load min-max | load at end |"
echo "$header"
echo "|---|---|---|---|---|---|---|"
{
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, 4 competing processes, pytest $*"
  echo "$header"
  echo "|---|---|---|---|---|---|---|"
} >>"$out"
status=0
for k in $(seq 1 "$runs"); do
  : >"$loads"
  start_load="$(load1)"
  start="$(date +%s.%N)"
  "$PYTHON" -m pytest "$@" >"artifacts/ci-busy-$k.log" 2>&1 || status=1
  wall="$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')"
  result="$(grep -E '(passed|failed|error|no tests ran).* in [0-9.]+s' "artifacts/ci-busy-$k.log" | tail -n 1 | sed -E 's/^=+ //; s/ =+$//')"
  seconds="$(echo "$result" | sed -E 's/.* in ([0-9.]+)s.*/\1/')"
  range="$(sort -n "$loads" | sed -n '1p;$p' | paste -sd-)"
  row="| $k | ${result:-no result line (see artifacts/ci-busy-$k.log)} | ${seconds:-} | $wall | $start_load | $range | $(load1) |"
  echo "$row"
  echo "$row" >>"$out"
done
exit "$status"
