"""A big cases file's check, running in a child while its run goes: watched, settled, stopped.

``prepare`` loads a suite with ``check_cases_file="background"`` when one process runs
the cases: the first case starts at once instead of after a pass that builds every line.
While the run goes, ``watch_check`` waits for the child's outcome off the event loop,
installs its totals and samples on the event loop's thread (where cases are built), and
stops the run when the file has bad lines: the caller reports them as the load would have.
"""

from __future__ import annotations

import asyncio
import contextlib

from jurybox.engine import SuiteRunner
from jurybox.suites import Problem, StreamedCases, Suite


def watch_check(suite: Suite, runner: SuiteRunner) -> asyncio.Task[tuple[Problem, ...]] | None:
    """A task that ends with the suite's background check (its problems; the run stopped on any); None: no check."""
    cases = suite.cases
    if not isinstance(cases, StreamedCases) or cases.file.pending is None:
        return None
    file, pending = cases.file, cases.file.pending

    async def watch() -> tuple[Problem, ...]:
        try:
            await asyncio.to_thread(pending.wait)
        except asyncio.CancelledError:
            # An interrupted run: the rest of the check is not wanted. Stopped here and now (not in a
            # thread a second cancellation could drop); the thread reading its pipe then ends and reaps it.
            pending.terminate()
            raise
        problems = file.settle()  # here, on the loop's thread: the samples are built with the suite's builder
        if problems:
            runner.stop()
        return problems

    return asyncio.get_running_loop().create_task(watch(), name="jurybox-cases-file-check")


def settle_check(suite: Suite) -> tuple[Problem, ...]:
    """Wait for the suite's background check (if any); its problems."""
    cases = suite.cases
    return cases.file.settle() if isinstance(cases, StreamedCases) else ()


def cancel_check(suite: Suite) -> None:
    """Stop the suite's background check, if one is running (a request that will not run)."""
    cases = suite.cases
    if isinstance(cases, StreamedCases) and cases.file.pending is not None:
        with contextlib.suppress(OSError):
            cases.file.pending.cancel()
        cases.file.settle()
