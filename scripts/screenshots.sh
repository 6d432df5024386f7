#!/usr/bin/env bash
# Regenerate the dashboard screenshots of docs/web.md (docs/images/web/*.png) from real runs of the example suite.
# Needs the browser extra and Debian's chromium: bash scripts/setup.sh && apt-get install -y chromium
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
"${PYTHON:-.venv/bin/python}" tests/web/screenshots.py  # PYTHON=... for another environment
