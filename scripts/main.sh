#!/usr/bin/env bash
# The main job: judge the example agent's recorded executions with the offline defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/jurybox check examples/recorded/runs.jsonl --judge examples.recorded.judges:cascade --no-gate "$@"
