"""What the regression verdict adds to the end of ``jurybox run``, and what 0-100 replies cost the verdict reader.

1. A suite of ``--cases`` passing cases (a Python agent, a ``contains`` judge) is run
   ``--runs`` times into a fresh SQLite store; each run's verdict
   (``print_regression_verdict``: one ``Store.check_regressions`` read) is timed
   alone and against the whole run's wall time.
2. ``correctness`` reads ``--replies`` replies in its own format and the same
   number in the ``{"score": 0-100, "issues": [...], "strengths": [...]}`` shape
   (the second shape is tried only after the first fails to validate); the
   microseconds per reply are printed for both.

    .venv/bin/python benchmarks/regression_verdict.py
    .venv/bin/python benchmarks/regression_verdict.py --cases 2000 --runs 6 --replies 5000
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from jurybox import Context
from jurybox._cli.run import RunRequest, execute
from jurybox._cli.run_regression import print_regression_verdict
from jurybox.llm import correctness
from jurybox.store import open_store

AGENT = """
def respond(message, session_id):
    return "Your listings: Beach House, Mountain Cabin."
"""


def _suite(folder: Path, cases: int) -> Path:
    (folder / "bench_agent.py").write_text(AGENT, encoding="utf-8")
    lines = ["name: bench", 'agent: {python: "bench_agent:respond"}', "cases:"]
    lines += [f"  - {{name: c{n}, prompt: listings, judges: [{{contains: Beach}}]}}" for n in range(cases)]
    path = folder / "suite.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_verdicts(cases: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        os.chdir(root)
        suite, store = _suite(root, cases), f"sqlite:///{root / 'runs.db'}"
        for number in range(1, runs + 1):
            started = time.perf_counter()
            quiet = Console(file=io.StringIO())
            code = execute(RunRequest(suites=(suite,), store=store, progress=False), console=quiet, status=quiet)
            wall = time.perf_counter() - started
            with open_store(store) as opened:
                run_id = opened.runs.newest("bench", status="completed", limit=1)[0].id
                began = time.perf_counter()
                print_regression_verdict(opened, run_id, Console(file=io.StringIO()))
                verdict = time.perf_counter() - began
            print(
                f"run {number}: {cases} cases, exit {code}, run wall {wall * 1000:.0f} ms, "
                f"verdict {verdict * 1000:.1f} ms ({verdict / wall:.1%} of the run)"
            )


def reader_cost(replies: int) -> None:
    ours = json.dumps({"score": 0.85, "reasoning": "right figure", "issues": ["no month"], "strengths": ["figure"]})
    theirs = json.dumps({"score": 85, "issues": ["no month"], "strengths": ["figure"]})
    judge = correctness("$4,200")
    classifier = judge.classifier
    context = Context(input="June revenue?", output="$4,200")
    assert context  # the reader is timed alone: no model, no template
    for label, reply in (("own format", ours), ("0-100 shape", theirs)):
        classifier.classify(reply)  # warm up
        began = time.perf_counter()
        for _ in range(replies):
            classifier.classify(reply)
        per = (time.perf_counter() - began) / replies
        print(f"verdict reader, {label}: {per * 1e6:.1f} us per reply ({replies} replies)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--replies", type=int, default=2000)
    options = parser.parse_args()
    sys.path.insert(0, os.getcwd())
    run_verdicts(options.cases, options.runs)
    reader_cost(options.replies)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
