#!/usr/bin/env bash
# Create .venv and install jurybox with everything the tests and the example need.
# Safe to run again: it reinstalls only when pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
fi

stamp=.venv/.jurybox-installed
wanted=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$wanted" ]; then
  # The CPU build of torch first: an unpinned torch (pulled by sentence-transformers) downloads GBs of CUDA wheels.
  # --no-compile: pip byte-compiles all 27,000 installed modules (about 66 CPU-s) otherwise; Python compiles
  # the ones the tests import, once, on first import.
  .venv/bin/python -m pip install --quiet --no-compile "torch==2.13.0"
  .venv/bin/python -m pip install --quiet --no-compile -e ".[dev,all,bridges,browser]"
  echo "$wanted" > "$stamp"
fi
