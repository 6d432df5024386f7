"""Benchmark: CPU instructions per case through the runner, counted by valgrind (repeatable on a noisy machine).

Wall and CPU times on a shared 2-core machine move by 10-20% from one run to the next, more
than most single changes to the runner save. Instruction counts do not: valgrind's callgrind
counts every instruction the process executes, the same for the same code and inputs
whatever else the machine is doing. This script runs the same suite as
``runner_overhead.py`` (one LLM judge call per case, the OpenAI provider against the stub
server in its own process, results streamed to a SQLite store) twice under callgrind, with
``--small`` and ``--large`` cases, at zero latency, and prints the difference divided by the
extra cases: the instructions each case costs, with start-up (imports, migrations, the first
connection) cancelled out. The stub's own instructions are not counted.

Usage:
    .venv/bin/python benchmarks/runner_instructions.py [--small 50] [--large 150] [--store none]

Needs valgrind (``apt-get install valgrind``). Under callgrind Python runs ~50x slower: the
default sizes take about three minutes. Compare two versions of the code by running it on
each; a change that saves less than ~0.5% is within the noise of hash seeds and timestamps.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from runner_overhead import start_stub, stop_stub, write_suite

_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def run_cases(cases: int, base_url: str, store: str) -> None:
    """The measured child: load the suite and run it, as ``jurybox run`` does."""
    from jurybox.engine import RunOptions, SuiteRunner
    from jurybox.store import open_store
    from jurybox.suites import load_suite

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = write_suite(folder, cases, base_url)
        opened = open_store(f"sqlite:///{folder / 'store.db'}") if store == "sqlite" else None
        suite = load_suite(path, concurrency=16)
        result = asyncio.run(SuiteRunner(suite, RunOptions(concurrency=16), store=opened).run())
        if opened is not None:
            opened.close()
        if not result.ok:
            raise SystemExit(f"the run did not pass: {result.status}")


def count_instructions(cases: int, base_url: str, store: str) -> int:
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__]
    command += ["--child", str(cases), "--url", base_url, "--store", store]
    # A fixed hash seed: set and dict layouts, and so the instructions, repeat from run to run.
    env = {**os.environ, "PYTHONHASHSEED": "0", "JURYBOX_CACHE": "off"}
    done = subprocess.run(command, check=False, capture_output=True, text=True, env=env)
    found = _REFS.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run of {cases} cases failed:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=50)
    parser.add_argument("--large", type=int, default=150)
    parser.add_argument("--store", choices=("sqlite", "none"), default="sqlite")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        run_cases(args.child, args.url, args.store)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    if args.large <= args.small:
        raise SystemExit("--large must be more cases than --small")
    stub, base_url = start_stub(0.0)
    try:
        small = count_instructions(args.small, base_url, args.store)
        large = count_instructions(args.large, base_url, args.store)
    finally:
        stop_stub(stub)
    per_case = (large - small) / (args.large - args.small)
    figures = {
        "store": args.store,
        "instructions_small": small,
        "instructions_large": large,
        "cases_small": args.small,
        "cases_large": args.large,
        "million_instructions_per_case": round(per_case / 1e6, 3),
        "python": sys.version.split()[0],
    }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
