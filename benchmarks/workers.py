"""What ``jurybox run --workers N`` buys when the run is bound by CPU in the runner's process.

A Python agent runs in the runner's process, so an agent that computes (local
retrieval, parsing, a small model) holds the one interpreter while it does, and
so do CPU-heavy judges. This runs N cases whose agent burns a fixed amount of
CPU per reply (``--agent-ms``), judged by a deterministic judge, through the
same calls as ``jurybox run`` (load_suite, SuiteRunner.run with a SQLite store),
once per worker count, and prints the wall time of each and its speed-up over
one process. Expect close to ``min(workers, cores)`` when the agent dominates.

Usage::

    .venv/bin/python benchmarks/workers.py                          # 400 cases, 4 ms of CPU each, 1 and 2 workers
    .venv/bin/python benchmarks/workers.py --workers 1 2 4 --agent-ms 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

AGENT = """
import hashlib
import time


def respond(message: str, session_id: str) -> str:
    # Busy for AGENT_SECONDS of CPU: what a retrieval or parsing step costs, without sleeping.
    deadline = time.thread_time() + AGENT_SECONDS
    digest = message.encode()
    while time.thread_time() < deadline:
        digest = hashlib.sha256(digest).digest()
    return "The answer to " + message + " is 42."
"""


def write_suite(folder: Path, cases: int, agent_ms: float) -> Path:
    (folder / "busy_agent.py").write_text(AGENT.replace("AGENT_SECONDS", repr(agent_ms / 1000)), encoding="utf-8")
    lines = ["name: workers-benchmark", 'agent: {python: "busy_agent:respond"}', "defaults: {retries: 0}", "cases:"]
    for index in range(cases):
        lines.append(f"  - name: case-{index:05d}")
        lines.append(f'    prompt: "question {index}"')
        lines.append("    judges: [{contains: {text: ['is 42']}}]")
    path = folder / "suite.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def timed_run(path: Path, store_url: str, concurrency: int, workers: int) -> tuple[float, bool]:
    from jurybox.engine import RunOptions, SuiteRunner
    from jurybox.store import open_store
    from jurybox.suites import load_suite

    suite = load_suite(path, concurrency=concurrency)
    with open_store(store_url) as store:
        runner = SuiteRunner(suite, RunOptions(concurrency=concurrency, workers=workers), store=store)
        started = time.perf_counter()
        result = asyncio.run(runner.run())
        return time.perf_counter() - started, result.ok and len(result.records) == len(suite.cases)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--agent-ms", type=float, default=4.0, help="CPU milliseconds the agent burns per reply")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sys.path.insert(0, str(folder))
        path = write_suite(folder, args.cases, args.agent_ms)
        walls: dict[int, float] = {}
        for workers in args.workers:
            wall, complete = timed_run(path, f"sqlite:///{folder / f'store-{workers}.db'}", args.concurrency, workers)
            if not complete:
                raise SystemExit(f"the run with {workers} worker(s) did not pass every case")
            walls[workers] = wall
    one = walls.get(1)
    figures = {
        "cases": args.cases,
        "concurrency": args.concurrency,
        "agent_cpu_ms_per_case": args.agent_ms,
        "cpus": os.cpu_count(),
        "wall_s": {str(w): round(s, 3) for w, s in walls.items()},
        "speedup_over_one_worker": {str(w): round(one / s, 2) for w, s in walls.items()} if one else None,
        "agent_cpu_s_in_all": round(args.cases * args.agent_ms / 1000, 3),
    }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
