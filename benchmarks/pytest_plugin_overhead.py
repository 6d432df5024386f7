"""What the pytest plugin costs: import time, cassette replay per request, sequential trials saved.

    .venv/bin/python benchmarks/pytest_plugin_overhead.py

1. Imports ``jurybox.pytest_plugin`` in a fresh interpreter (``-X importtime``) and
   prints the plugin's own cumulative import time: what every pytest session pays.
2. Replays the real Ollama NDJSON cassette (tests/data/cassettes/pytest_plugin) through
   httpx ``--requests`` times in record mode ``none`` and prints milliseconds per request.
3. Prints how many trials the sequential rule runs for a stable and a 50% case,
   against the budget ``n``.
"""

from __future__ import annotations

import argparse
import itertools
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from jurybox.pytest_plugin import CassetteSettings, use_cassette
from jurybox.testing import run_trials

ROOT = Path(__file__).resolve().parents[1]
CASSETTE = ROOT / "tests" / "data" / "cassettes" / "pytest_plugin" / "openllmetry__ollama_streaming_chat__ndjson.yaml"
BODY = {
    "model": "llama3",
    "messages": [{"role": "user", "content": "Tell me a joke about OpenTelemetry"}],
    "stream": True,
    "format": "",
    "options": {},
    "keep_alive": None,
}


def import_time_ms() -> float:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import jurybox.pytest_plugin"],
        capture_output=True,
        text=True,
        check=True,
    )
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| jurybox\.pytest_plugin$", line)
        if match:
            return int(match.group(1)) / 1000
    raise RuntimeError("jurybox.pytest_plugin not in the import-time report")


def replay_ms(requests: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / CASSETTE.name
        shutil.copyfile(CASSETTE, path)
        start = time.perf_counter()
        for _ in range(requests):
            with (
                use_cassette(path, record_mode="none", settings=CassetteSettings()),
                httpx.Client() as client,
                client.stream("POST", "http://127.0.0.1:11434/api/chat", json=BODY) as response,
            ):
                for _line in response.iter_lines():
                    pass
        return (time.perf_counter() - start) / requests * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    print(f"plugin import (cumulative, includes pytest and jurybox.core): {import_time_ms():.0f} ms")
    print(f"NDJSON cassette replay (open cassette + stream 30 chunks): {replay_ms(args.requests):.1f} ms/request")
    for label, outcomes, rate, budget in (
        ("stable, p=0.5", [True], 0.5, 20),
        ("stable, p=0.8", [True], 0.8, 20),
        ("50% flaky, p=0.9", [True, False], 0.9, 20),
    ):
        cycle = itertools.cycle(outcomes)
        result = run_trials(lambda cycle=cycle: next(cycle), rate, max_trials=budget)  # type: ignore[misc]
        print(f"trials {label}: {result.trials} of {budget} run -> {result.summary()}")


if __name__ == "__main__":
    main()
