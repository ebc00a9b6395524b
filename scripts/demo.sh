#!/usr/bin/env bash
# Install the app's dependencies into .venv and start it on the ready demo project.
#
# The demo is open (ACTIVEGRADE_OPEN_DEMO=1: no sign-in, everyone is an admin), so it
# - uses its own database, .activegrade/demo.db, unless ACTIVEGRADE_DB_URL names another
#   (the app refuses to run an open demo on a database that has accounts);
# - listens on 127.0.0.1 only, unless ACTIVEGRADE_DEMO_ADDRESS says otherwise, and answers only
#   clients on this machine unless ACTIVEGRADE_TRUSTED_PROXIES names who else may come in (e.g.
#   ACTIVEGRADE_DEMO_ADDRESS=0.0.0.0 ACTIVEGRADE_TRUSTED_PROXIES=192.168.1.0/24 make demo, to show it
#   on a trusted network).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh app
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export ACTIVEGRADE_OPEN_DEMO="${ACTIVEGRADE_OPEN_DEMO:-1}"  # the demo is open: switched on here, explicitly
export ACTIVEGRADE_DB_URL="${ACTIVEGRADE_DB_URL:-sqlite:///$PWD/.activegrade/demo.db}"
address="${ACTIVEGRADE_DEMO_ADDRESS:-127.0.0.1}"
port="${ACTIVEGRADE_PORT:-8501}"
echo "==> the demo project, prepared before the first visit"
python -m core projects demo --quiet || echo "==> the demo project is not ready: the app will say why"
echo "==> ActiveGrade demo: open http://localhost:$port  (Ctrl-C stops it)"
exec python -m streamlit run serve.py --server.address "$address" --server.port "$port" --server.headless true "$@"
