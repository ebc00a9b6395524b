#!/usr/bin/env bash
# Install the app's dependencies into .venv and start it on the ready demo project.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh app
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export ACTIVEGRADE_OPEN_DEMO="${ACTIVEGRADE_OPEN_DEMO:-1}"  # the demo is open: switched on here, explicitly
port="${ACTIVEGRADE_PORT:-8501}"
echo "==> ActiveGrade demo: open http://localhost:$port  (Ctrl-C stops it)"
exec python -m streamlit run app.py --server.port "$port" --server.headless true "$@"
