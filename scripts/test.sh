#!/usr/bin/env bash
# The whole test run: lint, types, then every test. This is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# Phoenix installs in the background meanwhile (its own venv, about 1.5 minutes); pytest waits for it.
bash scripts/phoenix.sh > .phoenix.log 2>&1 &
phoenix_install=$!
bash scripts/setup.sh
bash scripts/services.sh
# The dashboard's browser tests drive Debian's chromium (Playwright's own browser downloads are not used).
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/ruff check src tests benchmarks examples
.venv/bin/ruff format --check src tests benchmarks examples
.venv/bin/mypy
if wait "$phoenix_install"; then
  export JURYBOX_PHOENIX="$PWD/.phoenix/bin/phoenix"
else
  echo "Arize Phoenix did not install (see .phoenix.log): tests/traces/test_phoenix.py is skipped" >&2
fi
.venv/bin/pytest "$@"
