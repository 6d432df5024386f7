"""Runs (or resumes) a suite with a cases file, its plan written in small chunks, for a test to SIGKILL.

    python plan_kill_driver.py SUITE_YAML STORE_URL CHUNK [CHUNK_PAUSE_S]

Resumes the suite's latest unfinished run, or starts a new one when there is none,
or prints ``finished`` when the latest run is complete. Each chunk of the plan
waits ``CHUNK_PAUSE_S`` before it is written (outside its transaction), so a test
can kill the run while its plan is still being written.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import jurybox.engine._plan_writer as plan_writer
from jurybox.engine import RunOptions, SuiteRunner
from jurybox.store import RunRepository, open_store
from jurybox.suites import load_suite


def main(argv: list[str]) -> int:
    suite_path, url, chunk = argv[0], argv[1], int(argv[2])
    pause = float(argv[3]) if len(argv) > 3 else 0.0
    plan_writer.PLAN_CHUNK = chunk
    extend = RunRepository.extend_plan

    def slow_extend(
        self: RunRepository, run_id: str, cases: Sequence[tuple[str, Mapping[str, Any]]], **kw: Any
    ) -> None:
        time.sleep(pause)
        extend(self, run_id, cases, **kw)

    RunRepository.extend_plan = slow_extend  # type: ignore[method-assign]
    suite = load_suite(suite_path)
    with open_store(url) as store:
        latest = store.runs.latest(suite.name)
        if latest is not None and latest.finished:
            print("finished", flush=True)
            return 0
        resume = latest.id if latest is not None else None
        print(f"{'resume' if resume else 'new'} {resume or ''}", flush=True)
        result = asyncio.run(SuiteRunner(suite, RunOptions(concurrency=8), store=store).run(resume=resume))
        print(f"{result.status} {result.run_id}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
