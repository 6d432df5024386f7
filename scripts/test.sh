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
# Tests in parallel (pytest-xdist), one worker per CPU: many tests wait on stub servers and subprocesses.
# Not more: the timing-bound tests (a fleet, the run writer's memory) then get less than a CPU each.
# JURYBOX_TEST_WORKERS=N overrides it; 0 runs serially. tests/conftest.py (XDIST_GROUPS) keeps the Ray and
# browser modules, and each module sharing a module fixture, on one worker.
cpus=$(nproc 2>/dev/null || echo 1)
workers=${JURYBOX_TEST_WORKERS:-$(( cpus > 1 ? cpus : 0 ))}
if [ "$workers" -gt 0 ]; then
  .venv/bin/pytest -n "$workers" --dist loadgroup "$@"
else
  .venv/bin/pytest "$@"
fi
