"""``ProcessExecutor``: ``jurybox run --workers N``, the run's cases spread over forked processes.

The parent opens the run and forks N workers from the loaded suite; each runs
every N-th case with its share of the concurrency, exactly as a one-process run
does (``ShareRunner``), writes its records to the store itself and sends the
parent one small message per finished case. The parent's results are those
messages: summaries of records already stored. The process plumbing (fork,
pipes, signals) is in ``jurybox.executors._workers``.
"""

from __future__ import annotations

import asyncio
import functools
import signal
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Protocol

from jurybox.core import KIND_EXECUTOR, PluginRegistry, RunStatus
from jurybox.engine import CaseDone, Executor, ExecutorSummary, StreamedResults, llm_was_skipped
from jurybox.executors._local import LocalExecutor
from jurybox.models import Spend, split_evenly
from jurybox.suites import Case

if TYPE_CHECKING:
    from jurybox.engine import RunOptions, SuiteRunner
from jurybox.executors._workers import (
    CaseFinished,
    Message,
    PipeProgress,
    Worker,
    WorkerEnded,
    fork_available,
    interrupt,
    readable,
    send,
    start_worker,
    stop_on_signal,
    stopped_early,
)

WORKER_EXIT_TIMEOUT = 30.0
"""Seconds the workers get, together, to exit after their last message (or a stop) before they are killed."""
WORKER_KILL_GRACE = 2.0
"""Seconds the workers get to exit after a second Ctrl-C before they are killed."""


class ShareRunner(Protocol):
    """A one-process runner for a worker's share of a run (the suite runner, built in the worker)."""

    store_errors: list[str]

    @property
    def spend(self) -> Spend: ...

    def stop(self) -> None: ...

    async def run_share(self, run_id: str, cases: Sequence[Case]) -> RunStatus: ...


ShareFactory = Callable[[int, int, int, Connection], ShareRunner]
"""Builds a worker's runner in the worker: (index, count, concurrency share, pipe to the parent)."""


def check_workers(workers: int, concurrency: int, *, has_store: bool, own_target: bool) -> None:
    """Refuse ``workers`` > 1 where worker processes cannot do what one process does.

    Raises:
        ValueError: the reason, worded for the command line.
    """
    if workers == 1:
        return
    if not has_store:
        raise ValueError("--workers needs a store: each worker writes its cases' results there (drop --no-store)")
    if not own_target:
        raise ValueError(
            "--workers: each worker builds its agent from the suite's agent spec; "
            "a target given to the runner cannot be shared between processes"
        )
    if not fork_available():
        raise ValueError("--workers needs os.fork (Linux or macOS); run in one process here")
    if workers > concurrency:
        raise ValueError(
            f"--workers {workers} is more than --concurrency {concurrency}: "
            "each worker runs at least one case at a time"
        )


class ProcessExecutor(StreamedResults):
    """Runs cases in ``workers`` forked processes that write their own records to the store.

    Args:
        workers: Processes to fork (at most one per case).
        concurrency: Cases in flight across all of them; each gets its share.
        make_runner: Builds a worker's runner, in the worker.
        before_fork: Called before the fork (close database connections, stop threads).
        after_fork: Called in the parent after the fork (start what ``before_fork`` stopped).
    """

    def __init__(
        self,
        workers: int,
        concurrency: int,
        make_runner: ShareFactory,
        *,
        before_fork: Callable[[], None],
        after_fork: Callable[[], None],
    ) -> None:
        self._workers_wanted = workers
        self._concurrency = concurrency
        self._make_runner = make_runner
        self._before_fork = before_fork
        self._after_fork = after_fork
        self._workers: list[Worker] = []
        self._latest: dict[int, Spend] = {}
        self._store_errors: list[str] = []
        self._problems: list[str] = []
        self._stopping = False

    def start(self, run_id: str, cases: Sequence[Case]) -> None:
        """Fork the workers, each with every N-th case and its share of the concurrency."""
        count = min(self._workers_wanted, len(cases))
        shares = split_evenly(self._concurrency, count)
        self._before_fork()
        try:
            for index in range(count):
                main = functools.partial(_worker_main, self._make_runner, run_id, cases[index::count], shares[index])
                self._workers.append(start_worker(index, functools.partial(main, index, count)))
        except BaseException:
            interrupt(self._workers)  # the ones already started must not run on alone
            _reap(self._workers, time.monotonic() + WORKER_EXIT_TIMEOUT)
            raise
        finally:
            self._after_fork()

    async def results(self) -> AsyncGenerator[CaseDone, None]:
        """Each case a worker finished, as its message arrives; ends when every worker has ended."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[CaseDone | None] = asyncio.Queue()
        reading: set[Worker] = set(self._workers)

        def on_message(worker: Worker, message: Message) -> None:
            self._latest[worker.index] = message.spend
            if isinstance(message, WorkerEnded):
                worker.ended = message
                self._store_errors.extend(message.store_errors)
            elif isinstance(message, CaseFinished):
                queue.put_nowait(CaseDone(message.case, message.status, message.llm_skipped, self.spend))

        def on_eof(worker: Worker) -> None:
            reading.discard(worker)
            loop.remove_reader(worker.connection.fileno())
            worker.connection.close()
            if not reading:
                queue.put_nowait(None)

        for worker in self._workers:
            loop.add_reader(worker.connection.fileno(), readable, worker, on_message, on_eof)
        grace = WORKER_EXIT_TIMEOUT
        try:
            if reading:
                while (done := await queue.get()) is not None:
                    yield done
        except BaseException:
            interrupt(self._workers)
            grace = WORKER_KILL_GRACE  # a second Ctrl-C stops at once
            raise
        finally:
            for worker in reading:  # left only when this wait was cancelled
                loop.remove_reader(worker.connection.fileno())
            await asyncio.to_thread(_reap, self._workers, time.monotonic() + grace)
            self._problems.extend(problem for problem in (w.problem() for w in self._workers) if problem is not None)

    def stop(self) -> None:
        """Ask every worker to stop as Ctrl-C does: no new cases, finished records written."""
        self._stopping = True
        interrupt(self._workers)

    def summary(self) -> ExecutorSummary:
        workers = self._workers
        status: RunStatus
        if self._stopping or any(w.ended is not None and w.ended.status == "interrupted" for w in workers):
            status = "interrupted"
        elif any(w.problem() is not None for w in workers):
            # A worker that died or failed leaves its unfinished cases for --resume: the run failed, it was not stopped.
            status = "failed"
        else:
            status = "completed"
        return ExecutorSummary(status, list(self._store_errors), list(self._problems))

    async def aclose(self) -> None:
        """Nothing held here: each worker closes its own agent and connections."""

    @property
    def spend(self) -> Spend:
        """The sum of the workers' latest running totals."""
        total = Spend()
        for spend in self._latest.values():
            total.merge(spend)
        return total


def _worker_main(
    make_runner: ShareFactory,
    run_id: str,
    cases: Sequence[Case],
    concurrency: int,
    index: int,
    count: int,
    connection: Connection,
) -> None:
    """In a forked worker: run this worker's cases, writing to the store, and report to the parent."""
    runner = make_runner(index, count, concurrency, connection)
    # The parent's stop (SIGTERM) may come at any moment, even after this worker's loop has
    # ended, so it is not the loop's to handle: asyncio restores a handled signal's default
    # (for SIGTERM: die) when its loop closes. A Ctrl-C before the loop handles it stops too.
    signal.signal(signal.SIGTERM, stop_on_signal(runner.stop))
    signal.signal(signal.SIGINT, stop_on_signal(runner.stop))
    if stopped_early():
        runner.stop()
    try:
        status = asyncio.run(runner.run_share(run_id, cases))
    except KeyboardInterrupt:  # a second Ctrl-C: stop at once, as the parent does, without a traceback
        send(connection, WorkerEnded("interrupted", runner.spend, list(runner.store_errors)))
        return
    except BaseException as exc:
        # Building the agent, say: the parent reports why instead of only an exit code.
        send(connection, WorkerEnded("failed", runner.spend, list(runner.store_errors), _describe(exc)))
        raise
    send(connection, WorkerEnded(status, runner.spend, list(runner.store_errors)))
    connection.close()


def _reap(workers: list[Worker], deadline: float) -> None:
    """Wait for the workers to exit until ``deadline`` (one for all of them); kill those still running."""
    for worker in workers:
        worker.process.join(max(0.0, deadline - time.monotonic()))
        if worker.process.is_alive():
            worker.killed = True
            worker.process.kill()
            worker.process.join()


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class ProcessesPlugin:
    """``processes``: ``workers`` forked processes, each running every N-th case and writing its own records."""

    def check_options(self, options: RunOptions) -> None:
        """Any number of workers is checked against the machine when the run starts (``check``)."""

    def check(self, options: RunOptions, *, has_store: bool, own_target: bool) -> None:
        check_workers(options.workers, options.concurrency, has_store=has_store, own_target=own_target)

    def create(self, runner: SuiteRunner, todo: int) -> Executor:
        options = runner.options
        if options.workers < 2 or todo < 2:  # one worker's share of a run is a run in this process
            return LocalExecutor(runner.case_executor, options.concurrency)

        def make_runner(index: int, count: int, concurrency: int, connection: Connection) -> ShareRunner:
            return runner.share_runner(index, count, concurrency, PipeProgress(connection, llm_was_skipped))

        return ProcessExecutor(
            options.workers,
            options.concurrency,
            make_runner,
            before_fork=runner.before_fork,
            after_fork=runner.after_fork,
        )


PluginRegistry.default().register(
    KIND_EXECUTOR,
    "processes",
    ProcessesPlugin(),
    summary="forked worker processes, each running every N-th case and writing its own records (--workers N)",
)
