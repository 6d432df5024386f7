#!/usr/bin/env bash
# The main job: run the example agent's suite with the offline defaults.
# No key needed: deterministic and offline-embedding judges decide, and the LLM tier
# says it was skipped and how to enable it (e.g. --judge-model ollama:llama3.1).
# Extra arguments go to `jurybox run` (e.g. --format html --output reports/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/jurybox run examples/property_agent/suite.yaml "$@"
