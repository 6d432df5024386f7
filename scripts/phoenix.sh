#!/usr/bin/env bash
# Arize Phoenix in a venv of its own (.phoenix/): the real OTLP receiver tests/traces/test_phoenix.py
# sends judgments to. Its own venv because Phoenix pins dependencies of its own. Pinned so a new
# Phoenix release cannot change what the test proves. Safe to run again: it installs once.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=20.26.1
PYTHON=${PYTHON:-python3}
if [ "$(cat .phoenix/.installed 2>/dev/null)" != "$VERSION" ]; then
  rm -rf .phoenix
  "$PYTHON" -m venv .phoenix
  .phoenix/bin/python -m pip install --quiet --no-compile "arize-phoenix==$VERSION"
  echo "$VERSION" > .phoenix/.installed
fi
