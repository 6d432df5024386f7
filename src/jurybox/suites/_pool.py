"""``LocalExecutor``: the cases of a run on a fixed pool of tasks in this process.

Cost model: ``concurrency`` worker tasks pull cases from one iterator (no task
per case waiting on a semaphore), and each finished case goes to the consumer
through one bounded queue, so a consumer held back by a slow store holds the
tasks back instead of queueing the run in memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterator, Sequence
from dataclasses import dataclass

from jurybox.suites._case import Case
from jurybox.suites._execute import CaseExecutor
from jurybox.suites._executor import CaseDone, ExecutorSummary
from jurybox.suites._meter import Spend
from jurybox.suites._verdict import llm_was_skipped


@dataclass(frozen=True)
class _TaskEnded:
    """A worker task's last item: it ran out of cases, or the runner's own code failed in it."""

    error: BaseException | None = None


_WAKE = object()
"""Put by ``stop`` so a consumer waiting for the next result looks at the stop flag."""


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
        self._tasks: list[asyncio.Task[None]] = []
        self._queue: asyncio.Queue[object] | None = None
        self._finished_at_stop: list[CaseDone] = []

    def start(self, run_id: str, cases: Sequence[Case]) -> None:
        """Start the worker tasks (call from inside the event loop)."""
        count = min(self._concurrency, len(cases))
        # One slot per task: a task waits at most for its own result to be taken.
        self._queue = asyncio.Queue(maxsize=max(1, count))
        todo: Iterator[Case] = iter(cases)
        self._tasks = [
            asyncio.create_task(self._work(run_id, todo, self._queue), name=f"jurybox-case-worker-{index}")
            for index in range(count)
        ]

    async def results(self) -> AsyncGenerator[CaseDone, None]:
        """Each finished case, as it finishes; ends when every case ran or soon after ``stop``."""
        queue = self._queue
        if queue is None:
            raise RuntimeError("LocalExecutor.results() before start()")
        running = len(self._tasks)
        try:
            while running and not self._stopping:
                item = await queue.get()
                if isinstance(item, CaseDone):
                    yield item
                elif isinstance(item, _TaskEnded):
                    running -= 1
                    if item.error is not None:
                        raise item.error  # a runner bug, not a case failure: cases never raise
        finally:
            await self._cancel()
        # Stopped: cases that finished before the stop are still results (written, not re-run).
        while not queue.empty():
            item = queue.get_nowait()
            if isinstance(item, CaseDone):
                yield item
        while self._finished_at_stop:
            yield self._finished_at_stop.pop()

    def stop(self) -> None:
        self._stopping = True
        if self._queue is not None and not self._queue.full():
            self._queue.put_nowait(_WAKE)

    @property
    def spend(self) -> Spend:
        return self._cases.spend

    def summary(self) -> ExecutorSummary:
        return ExecutorSummary("interrupted" if self._stopping else "completed")

    async def aclose(self) -> None:
        await self._cancel()
        await self._cases.aclose()

    async def _work(self, run_id: str, todo: Iterator[Case], queue: asyncio.Queue[object]) -> None:
        try:
            for case in todo:
                if self._stopping:
                    break
                record = await self._cases.execute(case, run_id)
                done = CaseDone(case.name, record.status, llm_was_skipped(record), self._cases.spend, record)
                try:
                    await queue.put(done)
                except asyncio.CancelledError:
                    self._finished_at_stop.append(done)  # judged before the stop: still a result
                    raise
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            await queue.put(_TaskEnded(exc))
            return
        await queue.put(_TaskEnded())

    async def _cancel(self) -> None:
        """Abandon the cases in flight (a stopped run re-runs them on resume)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
