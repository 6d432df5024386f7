"""``LocalExecutor``: the cases of a run on a fixed pool of tasks in this process.

Cost model: ``concurrency`` worker tasks pull cases from one iterator (no task
per case waiting on a semaphore), and the task that finished a case hands it to
the runner itself (no queue, no consumer task to wake). A runner held back by a
slow store holds that task back, so the run is never queued in memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from jurybox.core import KIND_EXECUTOR, PluginRegistry
from jurybox.engine import CaseDone, CaseExecutor, ExecutorSummary, TakeResult, llm_was_skipped
from jurybox.models import Spend
from jurybox.suites import Case

if TYPE_CHECKING:
    from jurybox.engine import RunOptions, SuiteRunner


class LocalExecutor:
    """Runs cases on ``concurrency`` tasks of the running event loop.

    Args:
        cases: Runs and judges one case.
        concurrency: Cases in flight at once.
    """

    def __init__(self, cases: CaseExecutor, concurrency: int) -> None:
        self._cases = cases
        self._concurrency = concurrency
        self._stopping = False
        self._run_id = ""
        self._todo: Sequence[Case] = ()
        self._judging: set[asyncio.Task[None]] = set()
        """Tasks running or judging a case right now: a stop abandons exactly these."""
        self._tasks: list[asyncio.Task[None]] = []
        self._stopped: asyncio.Future[None] | None = None

    def start(self, run_id: str, cases: Sequence[Case]) -> None:
        """Take the run's cases; the tasks start in ``run``, once the runner's hand for results is known."""
        self._run_id = run_id
        self._todo = cases

    async def run(self, take: TakeResult) -> None:
        """Run every case on the task pool, each finished one handed to ``take`` by the task that ran it."""
        count = min(self._concurrency, len(self._todo))
        if self._stopping or count == 0:
            return
        todo: Iterator[Case] = iter(self._todo)
        self._stopped = asyncio.get_running_loop().create_future()
        self._tasks = [
            asyncio.create_task(self._work(todo, take), name=f"jurybox-case-worker-{index}") for index in range(count)
        ]
        everything = asyncio.gather(*self._tasks)
        try:
            await asyncio.wait((everything, self._stopped), return_when=asyncio.FIRST_COMPLETED)
        finally:
            await self._cancel()
        failure = everything.exception() if everything.done() and not everything.cancelled() else None
        if failure is not None and not isinstance(failure, asyncio.CancelledError):
            raise failure  # a runner bug, not a case failure: cases never raise

    def stop(self) -> None:
        """Take no new case and abandon the cases being judged; results being handed over still arrive."""
        self._stopping = True
        for task in self._judging:
            task.cancel()
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(None)

    @property
    def spend(self) -> Spend:
        return self._cases.spend

    def summary(self) -> ExecutorSummary:
        return ExecutorSummary("interrupted" if self._stopping else "completed")

    async def aclose(self) -> None:
        await self._cancel()
        await self._cases.aclose()

    async def _work(self, todo: Iterator[Case], take: TakeResult) -> None:
        task = asyncio.current_task()
        assert task is not None
        judging = self._judging
        execute = self._cases.execute
        run_id = self._run_id
        for case in todo:
            if self._stopping:
                return
            judging.add(task)
            try:
                record = await execute(case, run_id)
            finally:
                judging.discard(task)
            # Judged before any stop: a result whatever happens next, so it is handed over in full.
            await take(CaseDone(case.name, record.judgment.status, llm_was_skipped(record), self._cases.spend, record))

    async def _cancel(self) -> None:
        """Wait for results being handed over; abandon the cases in flight (a stopped run re-runs them on resume)."""
        for task in self._tasks:
            if task in self._judging or not self._stopping:
                task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class LocalPlugin:
    """``local``: the cases as tasks of this process's event loop (every run's default)."""

    def check_options(self, options: RunOptions) -> None:
        """Any options will do."""

    def check(self, options: RunOptions, *, has_store: bool, own_target: bool) -> None:
        """Any suite runs here."""

    def create(self, runner: SuiteRunner, todo: int) -> LocalExecutor:
        return LocalExecutor(runner.case_executor, runner.options.concurrency)


PluginRegistry.default().register(
    KIND_EXECUTOR, "local", LocalPlugin(), summary="tasks of this process's event loop (every run's default)"
)
