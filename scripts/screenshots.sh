#!/usr/bin/env bash
# Regenerate the dashboard screenshots of docs/web.md (docs/images/web/*.png) from real runs of the example suite;
# with "traces", those of docs/traces.md (docs/images/traces/*.png): CI runs and a week of production traces.
# Needs the browser extra and Debian's chromium: bash scripts/setup.sh && apt-get install -y chromium
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
if [ "${1:-}" = traces ]; then
    exec "${PYTHON:-.venv/bin/python}" tests/web/trace_screenshots.py
fi
"${PYTHON:-.venv/bin/python}" tests/web/screenshots.py  # PYTHON=... for another environment
