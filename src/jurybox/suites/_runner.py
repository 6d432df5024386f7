"""The async suite runner: run each case's conversation, judge it, stream the record to the store.

Cost model: a fixed pool of ``concurrency`` worker tasks pulls cases from an
iterator (no task per case waiting on a semaphore), all judges share the
run's one judge-model client, per-case bookkeeping is O(1), and store writes
go to one dedicated writer thread in the order cases finish. An agent that
crashes, hangs or returns garbage makes its case ERROR with the reason; the
run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
import time
import uuid
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from typing import Any, Literal, Protocol, TypeVar

from jurybox.agents import (
    AgentError,
    RoundOutcome,
    RoundSpec,
    Target,
    make_target,
    run_conversation,
)
from jurybox.core import Context, Judgment, Status
from jurybox.report import SKIPPED_TIERS_KEY
from jurybox.store import CaseRecord, RoundRecord, StoredRecords
from jurybox.suites._case import Case, Suite, seeded_agent
from jurybox.suites._conversation_helpers import clarification_detector, follow_up_writer
from jurybox.suites._judge_model import share_connections
from jurybox.suites._meter import Spend, start_case_spend
from jurybox.suites._registry import TIER_DETERMINISTIC, TIER_LLM
from jurybox.suites._sql import Databases, SqlCheckJudge
from jurybox.suites._verdict import (
    LLM_SKIP_REASON,
    LLM_SKIPPED,
    case_verdict_judge,
    llm_was_skipped,
    mark_llm_skipped,
    not_judged,
    round_judgment,
)
from jurybox.suites._workers import (
    Message,
    PipeProgress,
    Worker,
    WorkerEnded,
    fork_available,
    interrupt,
    readable,
    send,
    split,
    start_worker,
    stop_on_signal,
    stopped_early,
)

T = TypeVar("T")
RunStatus = Literal["completed", "interrupted", "failed"]
DEFAULT_CONCURRENCY = 8
SESSION_CLOSE_TIMEOUT = 5.0
"""Seconds a finished case waits for the agent to release its session before moving on."""
WORKER_EXIT_TIMEOUT = 30.0
"""Seconds the workers get, together, to exit after their last message (or a stop) before they are killed."""
WORKER_KILL_GRACE = 2.0
"""Seconds the workers get to exit after a second Ctrl-C before they are killed."""
MAX_PENDING_WRITES = 64
"""Finished records queued for the store's writer before the workers wait for it, whatever the concurrency.

While the writer thread commits one batch the next one gathers, so a busy run commits many cases at once.
A bigger queue only holds more records in memory: at 10,000 cases and concurrency 256, where the writer
sets the pace, 2 x concurrency (512) cost 19 MB more peak RSS than 64 for the same wall time.
"""
WRITE_LINGER = 0.05
"""Seconds a finished record waits for others to join its batch (a kill loses at most this much of finished work).

A batch costs a fixed transaction plus a little per case, so at concurrency 16 and 200 ms per judge call
this halves the store's CPU per case; ``WRITE_BATCH`` records, a drain or Ctrl-C write at once.
"""
WRITE_BATCH = 64
"""Queued records that start a write without waiting for ``WRITE_LINGER``."""


class RunStore(Protocol):
    """What the runner needs from ``jurybox.store``'s Store (sync; called on one writer thread)."""

    def begin_run(
        self,
        suite: str,
        *,
        cases: Mapping[str, Mapping[str, Any]],
        judge_model: str | None = None,
        agent_version: str | None = None,
        git_commit: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> str: ...

    def record_case(self, run_id: str, record: CaseRecord) -> bool: ...

    def record_cases(self, run_id: str, records: Sequence[CaseRecord]) -> list[bool]: ...

    def recorded_cases(self, run_id: str) -> set[str]: ...

    def records(self, run_id: str, *, cases: Collection[str] | None = None) -> Sequence[CaseRecord]: ...

    def finish_run(self, run_id: str, status: RunStatus = "completed") -> None: ...


class ProgressSink(Protocol):
    """Where the runner reports progress (the CLI's rich progress bar)."""

    def start(self, suite: str, total: int, done: int) -> None: ...

    def case_done(self, record: CaseRecord, spend: Spend) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class RunOptions:
    """How to run a suite.

    Attributes:
        concurrency: Cases in flight at once.
        selectors: Only cases whose name, tag or name glob matches one of these.
        timeout: Seconds per case, overriding the suite's (None keeps them).
        retries: Extra attempts after an agent crash or timeout, overriding the suite's.
        git_commit: Recorded with the run.
        agent_version: Recorded with the run.
        workers: Processes that run the cases (see ``jurybox.suites._workers``): above 1, the
            run forks that many workers, each running every N-th case with its share of
            ``concurrency`` and writing its records to the store. Needs a store, ``os.fork``
            and the suite's own agent spec.
    """

    concurrency: int = DEFAULT_CONCURRENCY
    selectors: tuple[str, ...] = ()
    timeout: float | None = None
    retries: int | None = None
    git_commit: str | None = None
    agent_version: str | None = None
    workers: int = 1

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"workers must be a whole number >= 1, got {self.workers!r}")
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError(f"timeout must be positive seconds, got {self.timeout}")
        if self.retries is not None and self.retries < 0:
            raise ValueError(f"retries must be >= 0, got {self.retries}")


@dataclass
class RunResult:
    """What a run produced.

    Attributes:
        records: Every case of the run, including those judged before a resume, in suite order.
            With a store they are read back from it on each pass (``StoredRecords``), so
            a run of any size holds none of them in memory; without one they are a list.
        status: ``completed`` or ``interrupted``.
        resumed: Cases already recorded when this session started.
        spend: Judge-model calls, tokens and cost of this session.
        store_errors: Writes that failed (the run went on; the store misses these cases).
        llm_skipped_cases: Cases whose LLM judges were left out for want of a judge model.
        worker_errors: Worker processes that ended before finishing their cases, and how.
    """

    suite: str
    run_id: str
    records: Sequence[CaseRecord]
    status: str
    started_at: datetime
    finished_at: datetime
    judge_model: str | None
    llm_skipped: bool
    spend: Spend = field(default_factory=Spend)
    resumed: int = 0
    total_cases: int = 0
    store_errors: list[str] = field(default_factory=list)
    llm_skipped_cases: int = 0
    worker_errors: list[str] = field(default_factory=list)

    def count(self, status: Status) -> int:
        return self._status_counts()[status]

    def _status_counts(self) -> Counter[Status]:
        if isinstance(self.records, StoredRecords):
            return self.records.status_counts()  # no judgment tree is read for a count
        return Counter(r.status for r in self.records)

    @property
    def ok(self) -> bool:
        """True when every selected case passed, the run finished and every record was stored.

        A run that judged no case (a selector that matched nothing) is not ok: a gate must not pass on it.
        """
        return (
            self.status == "completed"
            and not self.store_errors
            and not self.worker_errors
            and bool(self.records)
            and len(self.records) >= self.total_cases
            and self.count(Status.PASS) == len(self.records)
        )


class SuiteRunner:
    """Runs one suite's cases against its agent.

    Args:
        suite: The loaded suite.
        options: Concurrency, filters, timeouts, retries.
        target: The agent (default: built from the suite's ``agent:``).
        store: Where records go as each case finishes (None: kept in memory only).
        progress: A progress sink, or None.
    """

    def __init__(
        self,
        suite: Suite,
        options: RunOptions | None = None,
        *,
        target: Target | None = None,
        store: RunStore | None = None,
        progress: ProgressSink | None = None,
    ) -> None:
        self.suite = suite
        self.options = options or RunOptions()
        self.store = store
        self.progress = progress
        self._target = target
        self._own_target = target is None
        self._model = suite.model
        self._spend = Spend()
        self._stopping = asyncio.Event()
        self._databases = Databases()
        self._io: ThreadPoolExecutor | None = None
        self._queued: list[CaseRecord] = []  # finished, waiting for the writer thread
        self._queued_run: str | None = None
        self._writing: asyncio.Future[list[str]] | None = None
        self._linger: asyncio.TimerHandle | None = None  # a pending write of the queue, once it has gathered
        self._written = asyncio.Event()
        self._store_errors: list[str] = []
        self._worker_errors: list[str] = []
        self._llm_skipped_cases = 0
        self._max_pending = MAX_PENDING_WRITES
        self._detector = clarification_detector(suite.model)
        self._writer = follow_up_writer(suite.model)

    def stop(self) -> None:
        """Stop taking new cases and abandon those in flight (they are re-run on resume)."""
        self._stopping.set()

    async def run(self, *, resume: str | None = None) -> RunResult:
        """Run the suite (or, with ``resume``, only the cases that run has not recorded)."""
        started_at = datetime.now(UTC)
        if resume is not None and self.options.selectors:
            raise ValueError("--resume finishes the cases the run planned; it takes no --filter")
        cases = self.suite.select(self.options.selectors)
        if self.store is not None:
            self._io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jurybox-store")
        try:
            # The agent first: a bad agent spec must fail before a run is opened in the store.
            self._require_target()
            self._check_workers()
            # A store that keeps runs' plans (jurybox.store does; a RunStore need not) says what to finish.
            planned_cases = getattr(self.store, "planned_cases", None)
            if resume is not None and planned_cases is not None:
                planned: list[str] = await self._io_call(planned_cases, resume)
                cases = resumable_cases(self.suite, planned, resume) if planned else cases
            run_id, done = await self._open_run(cases, resume)
            todo = [case for case in cases if case.name not in done]
            # Kept only without a store: with one, each record is written as its case ends and dropped.
            kept: list[CaseRecord] | None = [] if self.store is None else None
            # Workers are forked before the progress bar starts its refresh thread: a thread holding
            # a lock (the terminal's, say) at the fork would leave that lock held in the worker forever.
            workers = self._start_workers(run_id, todo) if self._use_workers(todo) else None
            if self.progress is not None:
                self.progress.start(self.suite.name, len(cases), len(cases) - len(todo))
            if workers is not None:
                status = await self._await_workers(workers)
            else:
                status = await self._run_cases(run_id, todo, kept)
            await self._drain(run_id)
            wanted = {case.name for case in cases}
            records: Sequence[CaseRecord]
            if self.store is not None:
                await self._io_call(self.store.finish_run, run_id, status)
                records = await self._io_call(self.store.records, run_id, cases=wanted)
            else:
                records = kept or []
            if not isinstance(records, StoredRecords):  # a StoredRecords is in plan (suite) order already
                records = sorted((r for r in records if r.case in wanted), key=_order(cases))
            if done:  # cases judged before the restart: one pass over their stored records
                self._llm_skipped_cases += sum(1 for r in records if r.case in done and llm_was_skipped(r))
        finally:
            if self.progress is not None:
                self.progress.stop()
            await self._close()
        return RunResult(
            suite=self.suite.name,
            run_id=run_id,
            records=records,
            status=status,
            started_at=started_at,
            finished_at=datetime.now(UTC),
            judge_model=self.suite.judge_model,
            llm_skipped=any(c.skipped_without_model(llm_enabled=self.suite.llm_enabled) for c in cases),
            spend=self._spend,
            resumed=len(cases) - len(todo),
            total_cases=len(cases),
            store_errors=list(self._store_errors),
            llm_skipped_cases=self._llm_skipped_cases,
            worker_errors=list(self._worker_errors),
        )

    # -- run bookkeeping ---------------------------------------------------------------------------

    async def _open_run(self, cases: Sequence[Case], resume: str | None) -> tuple[str, set[str]]:
        if self.store is None:
            if resume is not None:
                raise ValueError("--resume needs a store (results of the earlier run live there)")
            return uuid.uuid4().hex, set()
        if resume is not None:
            return resume, set(await self._io_call(self.store.recorded_cases, resume))
        config = {
            "concurrency": self.options.concurrency,
            "selectors": list(self.options.selectors),
            "suite_file": str(self.suite.path),
            "llm_tier": "enabled" if self.suite.llm_enabled else LLM_SKIPPED,
            "workers": self.options.workers,
        }
        run_id = await self._io_call(
            self.store.begin_run,
            self.suite.name,
            cases={case.name: case.spec for case in cases},
            judge_model=self.suite.judge_model,
            agent_version=self.options.agent_version,
            git_commit=self.options.git_commit,
            config=config,
        )
        return str(run_id), set()

    async def _run_cases(self, run_id: str, todo: Sequence[Case], records: list[CaseRecord] | None) -> RunStatus:
        if not todo:
            return "completed"
        queue: Iterator[Case] = iter(todo)
        workers = [
            asyncio.create_task(self._worker(run_id, queue, records), name=f"jurybox-case-worker-{i}")
            for i in range(min(self.options.concurrency, len(todo)))
        ]
        stopper = asyncio.create_task(self._stopping.wait())
        restore = _on_sigint(self.stop)
        everything = asyncio.gather(*workers)
        waiting: set[asyncio.Future[Any]] = {stopper, everything}
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            self._stopping.set()
        finally:
            restore()
            stopper.cancel()
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        failure = everything.exception() if everything.done() and not everything.cancelled() else None
        if failure is not None and not isinstance(failure, asyncio.CancelledError):
            raise failure  # a runner bug, not a case failure: cases never raise
        return "interrupted" if self._stopping.is_set() else "completed"

    # -- worker processes (--workers) ----------------------------------------------------------------

    def _check_workers(self) -> None:
        """Refuse ``workers`` > 1 where worker processes cannot do what one process does."""
        if self.options.workers == 1:
            return
        if self.store is None:
            raise ValueError("--workers needs a store: each worker writes its cases' results there (drop --no-store)")
        if not self._own_target:
            raise ValueError(
                "--workers: each worker builds its agent from the suite's agent spec; "
                "a target given to the runner cannot be shared between processes"
            )
        if not fork_available():
            raise ValueError("--workers needs os.fork (Linux or macOS); run in one process here")
        if self.options.workers > self.options.concurrency:
            raise ValueError(
                f"--workers {self.options.workers} is more than --concurrency {self.options.concurrency}: "
                "each worker runs at least one case at a time"
            )

    def _use_workers(self, todo: Sequence[Case]) -> bool:
        return self.options.workers > 1 and len(todo) > 1

    def _start_workers(self, run_id: str, todo: Sequence[Case]) -> list[Worker]:
        """Fork the worker processes, each with every N-th case of ``todo`` and its share of the concurrency."""
        count = min(self.options.workers, len(todo))
        shares = split(self.options.concurrency, count)
        before_fork = getattr(self.store, "before_fork", None)
        if callable(before_fork):
            before_fork()  # no open database connection crosses the fork
        # Nor a thread: the store's writer thread is stopped and started again after the fork.
        if self._io is not None:
            self._io.shutdown(wait=True)
        workers: list[Worker] = []
        try:
            for index in range(count):
                main = functools.partial(self._worker_main, run_id, todo[index::count], shares[index], index, count)
                workers.append(start_worker(index, main))
        except BaseException:
            interrupt(workers)  # the ones already started must not run on alone
            _reap(workers, time.monotonic() + WORKER_EXIT_TIMEOUT)
            raise
        finally:
            if self._io is not None:
                self._io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jurybox-store")
        return workers

    async def _await_workers(self, workers: list[Worker]) -> RunStatus:
        """Listen to the workers until every one has ended: progress, spend, errors; stop them on Ctrl-C."""
        loop = asyncio.get_running_loop()
        latest: dict[int, Spend] = {}
        all_gone = loop.create_future()

        def on_message(worker: Worker, message: Message) -> None:
            latest[worker.index] = message.spend
            if isinstance(message, WorkerEnded):
                worker.ended = message
                self._store_errors.extend(message.store_errors)
                return
            self._llm_skipped_cases += message.llm_skipped
            if self.progress is not None:
                summary = CaseRecord(message.case, Judgment(message.status, reasoning="judged in a worker process"))
                self.progress.case_done(summary, _added(latest.values()))

        def on_eof(worker: Worker) -> None:
            reading.discard(worker)
            loop.remove_reader(worker.connection.fileno())
            worker.connection.close()
            if not reading and not all_gone.done():
                all_gone.set_result(None)

        reading: set[Worker] = set(workers)
        for worker in workers:
            loop.add_reader(worker.connection.fileno(), readable, worker, on_message, on_eof)
        restore = _on_sigint(self.stop)
        stopper = asyncio.create_task(self._stopping.wait())
        grace = WORKER_EXIT_TIMEOUT
        try:
            await asyncio.wait({all_gone, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if not all_gone.done():
                # Ctrl-C (which a terminal also sends the workers) or stop(): each worker stops as a
                # one-process run does, writing what finished.
                interrupt(workers)
                await all_gone
        except BaseException:
            interrupt(workers)
            grace = WORKER_KILL_GRACE  # a second Ctrl-C stops at once
            raise
        finally:
            restore()
            stopper.cancel()
            for worker in reading:  # left only when this wait was cancelled
                loop.remove_reader(worker.connection.fileno())
            await asyncio.to_thread(_reap, workers, time.monotonic() + grace)
            self._worker_errors.extend(problem for problem in (w.problem() for w in workers) if problem is not None)
        self._spend.merge(_added(latest.values()))
        if self._stopping.is_set() or any(w.ended is not None and w.ended.status == "interrupted" for w in workers):
            return "interrupted"
        # A worker that died or failed leaves its unfinished cases for --resume: the run failed, it was not stopped.
        return "failed" if any(w.problem() is not None for w in workers) else "completed"

    def _worker_main(
        self, run_id: str, cases: Sequence[Case], concurrency: int, index: int, count: int, connection: Connection
    ) -> None:
        """In a forked worker: run this worker's cases, writing to the store, and report to the parent."""
        share_connections(self.suite.model, index, count)
        runner = SuiteRunner(
            self.suite,
            replace(self.options, concurrency=concurrency, workers=1),
            store=self.store,
            progress=PipeProgress(connection, llm_was_skipped),
        )
        # The parent's stop (SIGTERM) may come at any moment, even after this worker's loop has
        # ended, so it is not the loop's to handle: asyncio restores a handled signal's default
        # (for SIGTERM: die) when its loop closes. A Ctrl-C before the loop handles it stops too.
        signal.signal(signal.SIGTERM, stop_on_signal(runner.stop))
        signal.signal(signal.SIGINT, stop_on_signal(runner.stop))
        if stopped_early():
            runner.stop()
        try:
            status = asyncio.run(runner._run_share(run_id, cases))
        except KeyboardInterrupt:  # a second Ctrl-C: stop at once, as the parent does, without a traceback
            send(connection, WorkerEnded("interrupted", runner._spend, list(runner._store_errors)))
            return
        except BaseException as exc:
            # Building the agent, say: the parent reports why instead of only an exit code.
            send(connection, WorkerEnded("failed", runner._spend, list(runner._store_errors), _describe(exc)))
            raise
        send(connection, WorkerEnded(status, runner._spend, list(runner._store_errors)))
        connection.close()

    async def _run_share(self, run_id: str, cases: Sequence[Case]) -> RunStatus:
        """A worker's part of a run that the parent opened and will finish."""
        self._io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jurybox-store")
        try:
            self._require_target()
            status = await self._run_cases(run_id, cases, None)
            await self._drain(run_id)
        finally:
            await self._close()
        return status

    async def _worker(self, run_id: str, queue: Iterator[Case], records: list[CaseRecord] | None) -> None:
        for case in queue:
            if self._stopping.is_set():
                return
            record = await self.execute(case, run_id)
            if records is not None:
                records.append(record)
            if llm_was_skipped(record):
                self._llm_skipped_cases += 1
            if self.store is not None:
                self._write(run_id, record)
                while len(self._queued) > self._max_pending:
                    # Backpressure: a store slower than the cases must not queue the whole run in memory.
                    self._flush(run_id)
                    self._written.clear()
                    await self._written.wait()
            if self.progress is not None:
                self.progress.case_done(record, self._spend)

    def _write(self, run_id: str, record: CaseRecord) -> None:
        self._queued.append(record)
        self._queued_run = run_id
        if len(self._queued) >= WRITE_BATCH:
            self._flush(run_id)
        elif self._linger is None and self._writing is None:
            self._linger = asyncio.get_running_loop().call_later(WRITE_LINGER, self._flush, run_id)

    def _flush(self, run_id: str) -> None:
        """Write the queue now, or as soon as the writer thread is free (its done callback writes it)."""
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        if self._writing is None and self._queued:
            self._write_queued(run_id)

    def _write_queued(self, run_id: str) -> None:
        """Hand every queued record to the writer thread as one batch (one transaction, one commit)."""
        assert self._io is not None
        batch, self._queued = self._queued, []
        future = asyncio.get_running_loop().run_in_executor(self._io, self._store_batch, run_id, batch)
        self._writing = future
        future.add_done_callback(lambda done: self._batch_written(done, run_id))

    def _store_batch(self, run_id: str, batch: list[CaseRecord]) -> list[str]:
        """On the writer thread: the batch in one transaction; if that fails, case by case so only a bad one is lost."""
        assert self.store is not None
        try:
            self.store.record_cases(run_id, batch)
            return []
        except Exception:
            errors = []
            for record in batch:
                try:
                    self.store.record_case(run_id, record)
                except Exception as exc:
                    errors.append(f"{record.case}: {type(exc).__name__}: {exc}")
            return errors

    def _batch_written(self, future: asyncio.Future[list[str]], run_id: str) -> None:
        self._writing = None
        if future.cancelled():
            self._store_errors.append("a write to the store was cancelled")
        elif future.exception() is not None:
            exc = future.exception()
            self._store_errors.append(f"{type(exc).__name__}: {exc}")
        else:
            self._store_errors.extend(future.result())
        if self._queued:
            # They gathered while the writer was busy, which is what a linger waits for.
            self._flush(run_id)
        self._written.set()

    async def _drain(self, run_id: str) -> None:
        """Write every queued record and wait until the writer thread has committed them all."""
        while self._writing is not None or self._queued:
            self._flush(run_id)
            self._written.clear()
            await self._written.wait()

    async def _io_call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        assert self._io is not None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._io, lambda: fn(*args, **kwargs))

    async def _close(self) -> None:
        if self._queued and self._queued_run is not None:
            # Only after a runner bug: the normal end drains the queue before finishing the run.
            with contextlib.suppress(Exception):
                await self._drain(self._queued_run)
        if self._own_target and self._target is not None:
            with contextlib.suppress(Exception):
                await self._target.aclose()
        await asyncio.to_thread(self._databases.dispose)
        if self._io is not None:
            self._io.shutdown(wait=True)

    # -- one case ----------------------------------------------------------------------------------

    async def execute(self, case: Case, run_id: str) -> CaseRecord:
        """Run and judge one case; never raises for agent or judge failures (ERROR record instead)."""
        spend = start_case_spend()
        try:
            return await self._execute(case, run_id, spend)
        finally:
            self._spend.merge(spend)

    async def _execute(self, case: Case, run_id: str, spend: Spend) -> CaseRecord:
        started_at = datetime.now(UTC)
        clock = time.perf_counter()
        timeout = self.options.timeout or case.timeout
        retries = self.options.retries if self.options.retries is not None else case.retries
        reasons: list[str] = []
        partial: Sequence[RoundOutcome] = ()
        outcomes: list[RoundOutcome] | None = None
        session_id = ""
        for attempt in range(retries + 1):
            session_id = f"{run_id[:12]}-{case.name}-{uuid.uuid4().hex[:8]}"
            try:
                async with asyncio.timeout(timeout):
                    outcomes = await run_conversation(
                        self._require_target(),
                        [RoundSpec(r.prompt, r.follow_ups) for r in case.rounds],
                        session_id=session_id,
                        revive_between_rounds=case.revive_between_rounds,
                        max_follow_ups=case.max_follow_ups,
                        is_clarification=self._detector,
                        follow_up=self._writer,
                        timeout=timeout,
                    )
                break
            except AgentError as exc:
                reasons.append(f"attempt {attempt + 1}: {exc.reason}")
                partial = exc.outcomes
            except TimeoutError:
                reasons.append(f"attempt {attempt + 1}: the case did not finish within {timeout:g}s")
            except Exception as exc:  # a follow-up writer or adapter bug: not worth retrying
                reasons.append(f"attempt {attempt + 1}: {type(exc).__name__}: {exc}")
                break
            finally:
                await self._end_session(session_id)
        base = {"session_id": session_id, "attempts": len(reasons) + (outcomes is not None)}
        if outcomes is None:
            return self._error_record(case, reasons, partial, started_at, clock, spend, base)
        try:
            return await self._judge(case, outcomes, session_id, started_at, clock, spend, base)
        except Exception as exc:  # judges turn their own failures into ERROR; this is a runner bug guard
            return self._error_record(
                case, [f"judging failed: {type(exc).__name__}: {exc}"], outcomes, started_at, clock, spend, base
            )

    async def _end_session(self, session_id: str) -> None:
        """Release what the adapter holds for a finished conversation (a Python agent's object and thread).

        What the agent stored stays: SQL checks run after this and read the database.
        """
        target = self._require_target()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(SESSION_CLOSE_TIMEOUT):
                await target.close_session(session_id)

    def _require_target(self) -> Target:
        if self._target is None:
            self._target = make_target(seeded_agent(self.suite.agent, self.suite.seeds), base_dir=self.suite.base_dir)
        return self._target

    async def _judge(
        self,
        case: Case,
        outcomes: Sequence[RoundOutcome],
        session_id: str,
        started_at: datetime,
        clock: float,
        spend: Spend,
        base: dict[str, Any],
    ) -> CaseRecord:
        contexts = [self._round_context(case, outcome) for outcome in outcomes]
        final = contexts[0] if len(contexts) == 1 else _conversation_context(case, contexts)
        extra = [
            (TIER_DETERMINISTIC, key, SqlCheckJudge(check, self._databases.engine(url), session_id, key))
            for key, check, url in self._sql_checks(case)
        ]
        cascade, skipped = case_verdict_judge(case, contexts, final, llm_enabled=self.suite.llm_enabled, extra=extra)
        judgment = not_judged(case, skipped) if cascade is None else mark_llm_skipped(await cascade(final), skipped)
        rounds: tuple[RoundRecord, ...]
        if len(outcomes) == 1:
            rounds = (RoundRecord(0, outcomes[0].prompt, contexts[0], judgment, outcomes[0].follow_ups),)
        else:
            planned = [item.key for item in case.judges]
            rounds = tuple(
                RoundRecord(o.index, o.prompt, contexts[i], round_judgment(judgment, i, skipped, planned), o.follow_ups)
                for i, o in enumerate(outcomes)
            )
        metadata = dict(base)
        metadata["agent_usage"] = _agent_usage(outcomes)
        if skipped:
            metadata.update(llm_tier=LLM_SKIPPED, skipped_judges=list(skipped))
            metadata[SKIPPED_TIERS_KEY] = {TIER_LLM: LLM_SKIP_REASON}
        return CaseRecord(
            case=case.name,
            judgment=judgment,
            rounds=rounds,
            context=final,
            duration=time.perf_counter() - clock,
            tokens=spend.known_tokens,
            cost=spend.known_cost,
            judge_calls=spend.calls,
            tags=case.tags,
            error=judgment.reasoning if judgment.status is Status.ERROR else None,
            started_at=started_at,
            metadata=metadata,
        )

    def _round_context(self, case: Case, outcome: RoundOutcome) -> Context:
        plan = case.rounds[outcome.index]
        reference = (
            plan.reference if plan.reference is not None else (case.reference if len(case.rounds) == 1 else None)
        )
        context = outcome.context
        changes: dict[str, Any] = {}
        if reference is not None:
            changes["expected"] = reference
        if case.sources:
            changes["sources"] = _unique([*case.sources, *context.sources])
        if case.metadata:
            changes["metadata"] = {**case.metadata, **context.metadata}
        return context.replace(**changes) if changes else context

    def _sql_checks(self, case: Case) -> Iterable[tuple[str, Any, str]]:
        for index, check in enumerate(case.sql_checks):
            url = check.database or self.suite.database
            if url is None:
                raise ValueError(f"sql_checks[{index}] of case {case.name!r} has no database URL")
            yield check.name or f"sql_checks[{index}]", check, url

    def _error_record(
        self,
        case: Case,
        reasons: Sequence[str],
        partial: Sequence[RoundOutcome],
        started_at: datetime,
        clock: float,
        spend: Spend,
        base: dict[str, Any],
    ) -> CaseRecord:
        reason = reasons[-1].split(": ", 1)[-1] if reasons else "unknown error"
        detail = "; ".join(reasons)
        judgment = Judgment.errored(detail, judge=case.name, metadata={**base, "stage": "agent"})
        rounds = tuple(
            RoundRecord(
                o.index,
                o.prompt,
                o.context,
                Judgment.abstained("not judged: the case errored", judge=f"round{o.index + 1}"),
                o.follow_ups,
            )
            for o in partial
        )
        return CaseRecord(
            case=case.name,
            judgment=judgment,
            rounds=rounds,
            context=rounds[-1].context if rounds else Context(input=case.rounds[0].prompt, status="error"),
            duration=time.perf_counter() - clock,
            tokens=spend.known_tokens,
            cost=spend.known_cost,
            judge_calls=spend.calls,
            tags=case.tags,
            error=reason,
            started_at=started_at,
            metadata={**base, "reasons": list(reasons)},
        )


def _conversation_context(case: Case, contexts: Sequence[Context]) -> Context:
    """The whole conversation as one context: last reply, every tool call, all sources."""
    last = contexts[-1]
    return last.replace(
        expected=case.reference,
        tool_calls=tuple(call for c in contexts for call in c.tool_calls),
        sources=_unique(s for c in contexts for s in c.sources),
        duration=sum(c.duration or 0.0 for c in contexts),
        started_at=contexts[0].started_at,
        metadata={**case.metadata, **last.metadata, "rounds": len(contexts)},
    )


def _agent_usage(outcomes: Sequence[RoundOutcome]) -> dict[str, Any]:
    from jurybox.agents import sum_usage

    return sum_usage(o.reply.usage for o in outcomes)


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


def _order(cases: Sequence[Case]) -> Callable[[CaseRecord], int]:
    positions = {case.name: index for index, case in enumerate(cases)}
    return lambda record: positions.get(record.case, len(positions))


def _on_sigint(stop: Callable[[], None]) -> Callable[[], None]:
    """Make Ctrl-C stop the run cleanly (a second Ctrl-C interrupts at once); returns the undo."""
    loop = asyncio.get_running_loop()
    fired = False

    def handler() -> None:
        nonlocal fired
        if fired:
            loop.remove_signal_handler(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
            return
        fired = True
        stop()

    try:
        loop.add_signal_handler(signal.SIGINT, handler)
    except (NotImplementedError, RuntimeError, ValueError):
        return lambda: None  # not the main thread, or no signal support: KeyboardInterrupt still cancels the run

    def restore() -> None:
        with contextlib.suppress(Exception):
            loop.remove_signal_handler(signal.SIGINT)

    return restore


def _added(spends: Iterable[Spend]) -> Spend:
    """The sum of several running totals (one per worker process)."""
    total = Spend()
    for spend in spends:
        total.merge(spend)
    return total


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


def resumable_cases(suite: Suite, planned: Sequence[str], run_id: str) -> tuple[Case, ...]:
    """The cases a resumed run judges: the ones it planned, in plan order, as the suite defines them now.

    Not the suite's whole selection: a run planned with ``--filter`` stays that run.

    Raises:
        ValueError: the suite no longer has some planned case (the run could never be completed).
    """
    by_name = {case.name: case for case in suite.cases}
    gone = [name for name in planned if name not in by_name]
    if gone:
        shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
        raise ValueError(
            f"run {run_id} planned case(s) suite {suite.name!r} no longer has: {shown}; "
            "it cannot be finished (start a new run)"
        )
    return tuple(by_name[name] for name in planned)
