#!/usr/bin/env bash
# Install the app's dependencies and start it on the ready demo project.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
"$PYTHON" -m pip install -q -r requirements.txt
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export ACTIVEGRADE_OPEN_DEMO="${ACTIVEGRADE_OPEN_DEMO:-1}"  # the demo is open: switched on here, explicitly
exec "$PYTHON" -m streamlit run app.py "$@"
